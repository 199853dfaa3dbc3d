"""Screenshots of a job's NCCL log opened in the dashboard: the `nccl` cells, the pair panel and its knowledge-base
entry, at 80 x 24 and 200 x 50. The log is REAL (tests/fixtures/device/h100x2-nccl/p2p-level-loc.log: a two-rank
torchrun with NCCL_P2P_LEVEL=LOC on a 2 x H100 host); the host beside it is the h200x2-vm demo (SIMULATED, labelled
so on screen), as the log is not from this machine.  python scripts/nccl_log_screenshots.py [OUTDIR]"""

from __future__ import annotations

import asyncio
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from p2ptop.ui.app import P2PTopApp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOG = os.path.normpath(os.path.join(HERE, "..", "tests", "fixtures", "device", "h100x2-nccl", "p2p-level-loc.log"))


async def shoot(size: tuple[int, int], path: str) -> None:
    app = P2PTopApp(demo="h200x2-vm")
    async with app.run_test(size=size) as pilot:
        async def settle() -> None:
            for _ in range(4):
                await app.workers.wait_for_complete()
                await pilot.pause()
        await settle()
        app.nccl.open_log(LOG)
        await settle()
        app._set_mode("nccl")
        app.matrix.select_pair(0, 1)
        await settle()
        await pilot.pause(6)  # past the notifications
        app.save_screenshot(filename=os.path.basename(path), path=os.path.dirname(path))
    print(path)


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "screenshots")
    os.makedirs(out, exist_ok=True)
    for cols, rows in ((80, 24), (200, 50)):
        asyncio.run(shoot((cols, rows), os.path.join(out, f"nccl-log-{cols}x{rows}.svg")))


if __name__ == "__main__":
    main()
