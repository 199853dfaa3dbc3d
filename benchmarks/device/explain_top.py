"""One line from ``p2ptop explain --json`` on stdin: the answer's kind and its first entries, as the device scripts print
it beside each answer (diagnosis.sh, x2_diagnosis.sh, x2_app_faults.sh). Usage: ``... --json | python3 explain_top.py [N]``."""

import json
import sys


def main(n: int = 3) -> None:
    try:
        d = json.load(sys.stdin)
    except Exception as e:  # the command failed or printed no JSON: say so on the line
        print("  json: unreadable", e)
        return
    ms = d.get("matches") or []
    print("  json:", d.get("answer"), "| top:", [(m.get("id"), m.get("failure_class"), m.get("confidence")) for m in ms[:n]] or "none",
          "| note:", str(d.get("note") or "")[:160])


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
