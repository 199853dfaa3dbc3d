"""The fleet screen: ranked hosts, filters, Enter opens the host's dashboard, Esc comes back."""

import importlib.util
import pathlib

import pytest

from p2ptop.fleet import load_fleet
from p2ptop.ui.fleet_host import HostDashboard
from p2ptop.ui.fleet_screen import FleetApp, FleetView

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("make_fleet", ROOT / "scripts" / "make_fleet.py")
make_fleet = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_fleet)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    d = tmp_path_factory.mktemp("fleetui")
    planted = make_fleet.make(str(d / "h100"), 10, "dgx-h100", faults=3, seed=5)
    make_fleet.make(str(d / "a100"), 4, "nvlink-degraded", faults=0, seed=6, prefix="a100-")
    return load_fleet([str(d)], workers=1), planted


async def test_ranked_hosts_enter_opens_and_filters(fleet):
    fl, planted = fleet
    app = FleetApp(fl)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert len(app.shown) == 14
        # the A100 demo has links down on every host: those rank first, then the planted H100 faults
        top = [h["host"] for h in app.shown[:7]]
        assert {p["host"] for p in planted} <= set(top)
        assert "SIMULATED" in str(app.query_one("#summary").render())
        app.query_one("#model").value = "NVIDIA H100 80GB HBM3"
        await pilot.pause()
        assert len(app.shown) == 10 and {h["host"] for h in app.shown[:3]} == {p["host"] for p in planted}
        detail = str(app.query_one("#detail_text").render())
        assert app.shown[0]["host"] in detail
        await pilot.press("down", "enter")
        await pilot.pause()
    assert app.return_value["host"] == app.shown[1]["host"]
    assert app.view.model == "NVIDIA H100 80GB HBM3" and app.view.row == 1


async def test_view_is_restored_when_coming_back(fleet):
    fl, _ = fleet
    app = FleetApp(fl, FleetView(model="NVIDIA H100 80GB HBM3", row=2), message="back from node0003")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert len(app.shown) == 10
        assert app.query_one("#hosts").cursor_row == 2
        assert "back from node0003" in str(app.query_one("#summary").render())


async def test_host_dashboard_escape_returns(fleet):
    fl, _ = fleet
    host = fl.hosts[0]
    dash = HostDashboard(replay=host["file"])
    async with dash.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert dash.is_running
        await pilot.press("escape")
        await pilot.pause()
    assert dash.return_code == 0


async def test_host_names_are_data_not_markup(tmp_path):
    import json

    from p2ptop.demos import demo_path

    doc = json.loads(pathlib.Path(demo_path("dgx-h100")).read_text())
    doc["source"]["hostname"] = "[bold red]evil[/]\x1b[31m"
    (tmp_path / "x.json").write_text(json.dumps(doc))
    fl = load_fleet([str(tmp_path)], workers=1)
    app = FleetApp(fl)
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        text = app.export_screenshot()
        assert "[bold red]evil[/]" in text.replace("&#160;", " ")


async def test_screen_loads_files_itself_and_fills_as_they_arrive(fleet, tmp_path):
    import asyncio

    fl, planted = fleet
    d = pathlib.Path(fl.hosts[0]["file"]).parent.parent
    (tmp_path / "broken.json").write_text("{")
    app = FleetApp(sources=[str(d), str(tmp_path)], load_options={"workers": 1})
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.loading and "loading" in str(app.query_one("#summary").render())
        for _ in range(200):
            await asyncio.sleep(0.1)
            if not app.loading:
                break
        await pilot.pause()
        assert not app.loading and len(app.shown) == 14
        assert len(app.fleet.problems) == 1 and "1 files not loaded" in str(app.query_one("#summary").render())
        assert {p["host"] for p in planted} <= {h["host"] for h in app.shown[:7]}
        assert all("siblings" in h for h in app.shown)
