"""The memory-pinning repro of issue 19: many sessions store a huge synthesis choice, then open the Quiz page.

Each session opens the Scaling out page, sets each of the four synthesis radios to a string of
`--value-kb` kilobytes (the page never offers it; the app must refuse it), presses "Save synthesis", then
opens Quiz and report, which builds the progress file from what was stored. Before the fix the
string was stored and signed into a file on every visit (30 sessions: 792 -> 1,667 MB). Reports
the server's RSS before, at the peak and after the sessions leave. Loopback only.

    python -m bench.memory_pin --sessions 30 --value-kb 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from bench.load_client import Session, SessionError
from bench.run_load import _random_token, _warm_up
from bench.scenarios import TARGETS
from bench.server import ResourceSampler, StreamlitServer

_MB = 1_000_000
SYNTHESIS_FORM_LABEL = "Save synthesis"


async def _pin(port: int, index: int, value: str) -> list[str]:
    """One hostile session; returns the exception elements the server showed it, or how it was cut off."""
    session = Session(port=port, marker=f"bench-s{index:03d}-pin", timeout_s=120)
    try:
        await session.connect("scaling")
        model = session.model
        save = next(
            w for w in model.widgets.values() if w.kind == "button" and w.label == SYNTHESIS_FORM_LABEL
        )
        for widget in model.widgets.values():
            if widget.kind == "radio" and widget.form_id == save.form_id:
                model.set_value(widget.id, value)
        model.click(save.id)
        shown = list((await session.rerun()).exceptions)
        shown += (await session.rerun(page_hash=model.page("quiz-report").script_hash)).exceptions
        return shown
    except SessionError as error:  # Streamlit closes a connection whose message is over 1 MB
        return [f"cut off: {error.kind}"]
    finally:
        await session.close()


def main(argv: list[str] | None = None) -> int:
    """Run the repro once and print the server's memory; JSON goes to bench/results/memory_pin.json."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument(
        "--value-kb",
        type=int,
        default=200,
        help="per radio; four radios share Streamlit's 1 MB message limit",
    )
    args = parser.parse_args(argv)
    out = Path("bench/results")
    value = "x" * (args.value_kb * 1000)
    with StreamlitServer(
        script=TARGETS["app"].script, post_script_gc=False, log_path=out / "memory_pin.server.log"
    ) as server:
        assert server.process is not None
        sampler = ResourceSampler(server.process.pid, interval_s=0.5)
        asyncio.run(_warm_up(server.port, TARGETS["app"], _random_token()))
        baseline = sampler.read()
        sampler.start()
        started = time.monotonic()

        async def everyone() -> list[list[str]]:
            return await asyncio.gather(*(_pin(server.port, i, value) for i in range(args.sessions)))

        shown = asyncio.run(everyone())
        elapsed_s = time.monotonic() - started
        time.sleep(5)
        sampler.stop()
        after = sampler.read()
    result = {
        "sessions": args.sessions,
        "value_kb": args.value_kb,
        "elapsed_s": elapsed_s,
        "baseline_rss_mb": baseline.rss_bytes / _MB,
        "peak_rss_mb": max(s.rss_bytes for s in sampler.samples) / _MB,
        "after_rss_mb": after.rss_bytes / _MB,
        "exception_elements": sum(1 for s in shown for e in s if not e.startswith("cut off")),
        "sessions_cut_off": sum(1 for s in shown if any(e.startswith("cut off") for e in s)),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "memory_pin.json").write_text(json.dumps(result, indent=1))
    print(
        f"{args.sessions} sessions x {args.value_kb} kB synthesis values in {elapsed_s:.0f} s: RSS "
        f"{result['baseline_rss_mb']:.0f} MB before, peak {result['peak_rss_mb']:.0f} MB, "
        f"{result['after_rss_mb']:.0f} MB 5 s after; exception elements {result['exception_elements']}; "
        f"sessions cut off by the message limit {result['sessions_cut_off']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
