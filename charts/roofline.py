"""The roofline chart: one GPU's roof, its ridge point, and operations placed beneath it."""

from __future__ import annotations

import altair as alt

from charts.describe import figure
from core import lessons
from core.datafiles import require
from core.roofline import Roof, RooflinePoint, roof_outline, roofline_rows

# Fixed axes, wide enough for every GPU, dtype and slider position, so the chart never rescales:
# the smallest layer sits near 0.5 FLOP/byte, the bf16 matmul near 1,400; peaks reach ~1,000 TFLOP/s.
FLOP_PER_BYTE_DOMAIN = (0.1, 10_000.0)
TFLOPS_DOMAIN = (0.01, 2_000.0)

ROOF_COLOUR = "#9aa0a6"
RIDGE_COLOUR = "#e8710a"
# One colour per operation, in the order the page lists them (layer, matmul, GELU, LayerNorm).
POINT_COLOURS = ("#4c8bf5", "#34a853", "#d93025", "#a142f4")
REGIME_SHAPES = {"memory-bound": "triangle-up", "compute-bound": "circle"}
MEASURED_COLOUR = "#f9ab00"

HEIGHT = 400
X_TITLE = "Arithmetic intensity (FLOP/byte, log scale)"
Y_TITLE = "Attainable throughput (TFLOP/s, log scale)"


def _x(field: str) -> alt.X:
    return alt.X(f"{field}:Q", title=X_TITLE, scale=alt.Scale(type="log", domain=list(FLOP_PER_BYTE_DOMAIN)))


def _y(field: str) -> alt.Y:
    return alt.Y(f"{field}:Q", title=Y_TITLE, scale=alt.Scale(type="log", domain=list(TFLOPS_DOMAIN)))


def _roof_rows(roof: Roof) -> list[dict]:
    low, high = FLOP_PER_BYTE_DOMAIN
    return [
        {
            "FLOP/byte": x,
            "TFLOP/s": y,
            "GPU": roof.gpu_name,
            "dtype": roof.dtype,
            "Peak TFLOP/s": roof.peak_tflops,
            "Bandwidth TB/s": roof.bandwidth_tb_per_s,
        }
        for x, y in roof_outline(roof, min_flop_per_byte=low, max_flop_per_byte=high)
    ]


def _ridge_rows(roof: Roof) -> list[dict]:
    return [
        {
            "Ridge FLOP/byte": roof.ridge_flop_per_byte,
            "Peak TFLOP/s": roof.peak_tflops,
            "label": f"ridge {roof.ridge_flop_per_byte:,.1f} FLOP/byte",
        }
    ]


def _roof_layer() -> alt.Chart:
    return (
        alt.Chart(alt.NamedData(name="roof"))
        .mark_line(color=ROOF_COLOUR, strokeWidth=3, clip=True)
        .encode(
            x=_x("FLOP/byte"),
            y=_y("TFLOP/s"),
            tooltip=[
                alt.Tooltip("GPU:N"),
                alt.Tooltip("dtype:N", title="Number format"),
                alt.Tooltip("Peak TFLOP/s:Q", format=",.1f"),
                alt.Tooltip("Bandwidth TB/s:Q", format=",.3f"),
            ],
        )
    )


def _ridge_layers() -> alt.LayerChart:
    tooltip = [alt.Tooltip("Ridge FLOP/byte:Q", format=",.1f"), alt.Tooltip("Peak TFLOP/s:Q", format=",.1f")]
    base = alt.Chart(alt.NamedData(name="ridge"))
    rule = base.mark_rule(color=RIDGE_COLOUR, strokeDash=[6, 4]).encode(
        x=_x("Ridge FLOP/byte"), tooltip=tooltip
    )
    marker = base.mark_point(color=RIDGE_COLOUR, size=140, filled=True, shape="diamond").encode(
        x=_x("Ridge FLOP/byte"), y=_y("Peak TFLOP/s"), tooltip=tooltip
    )
    label = base.mark_text(color=RIDGE_COLOUR, align="left", dx=8, dy=-12).encode(
        x=_x("Ridge FLOP/byte"), y=_y("Peak TFLOP/s"), text=alt.Text("label:N"), tooltip=tooltip
    )
    return alt.LayerChart(layer=[rule, marker, label])


def _point_layer(names: tuple[str, ...]) -> alt.Chart:
    return (
        alt.Chart(alt.NamedData(name="points"))
        .mark_point(size=160, filled=True, opacity=0.9)
        .encode(
            x=_x("FLOP/byte"),
            y=_y("Attainable TFLOP/s"),
            color=alt.Color(
                "Operation:N",
                scale=alt.Scale(domain=list(names), range=list(POINT_COLOURS[: len(names)])),
                legend=alt.Legend(orient="bottom", columns=2, title=None),
            ),
            # The page's caption explains the shapes; a second legend does not fit a narrow column.
            shape=alt.Shape(
                "Regime:N",
                scale=alt.Scale(domain=list(REGIME_SHAPES), range=list(REGIME_SHAPES.values())),
                legend=None,
            ),
            tooltip=[
                alt.Tooltip("Operation:N"),
                alt.Tooltip("FLOP/byte:Q", title="Intensity (FLOP/byte)", format=",.2f"),
                alt.Tooltip("Attainable TFLOP/s:Q", format=",.2f"),
                alt.Tooltip("Regime:N"),
                alt.Tooltip("Time bound:N", title="Fastest possible time"),
                alt.Tooltip("GFLOP:Q", format=",.3g"),
                alt.Tooltip("MB moved:Q", format=",.1f"),
            ],
        )
    )


def _measured_layer() -> alt.Chart:
    return (
        alt.Chart(alt.NamedData(name="measured"))
        .mark_point(shape="square", size=70, filled=False, strokeWidth=2, color=MEASURED_COLOUR)
        .encode(
            x=_x("FLOP/byte"),
            y=_y("Achieved TFLOP/s"),
            tooltip=[
                alt.Tooltip("Measured:N", title="Measured on the H200"),
                alt.Tooltip("FLOP/byte:Q", title="Intensity (FLOP/byte)", format=",.3g"),
                alt.Tooltip("Achieved TFLOP/s:Q", format=",.3g"),
                alt.Tooltip("% of peak:Q", format=".2g"),
                alt.Tooltip("% of roof:Q", format=".2g"),
                alt.Tooltip("Time (µs):Q", format=",.3g"),
            ],
        )
    )


def roofline_shape(
    roof: Roof, points: tuple[RooflinePoint, ...], *, measured: bool = False
) -> tuple[str, str, tuple[str, ...], bool]:
    """What the roofline's layout depends on: the GPU and number format in its title, the operations'
    names, and whether measured kernels are drawn."""
    return roof.gpu_name, roof.dtype, tuple(point.name for point in points), measured


def roofline_datasets(
    roof: Roof, points: tuple[RooflinePoint, ...], measured: list[dict] | None = None
) -> dict[str, list[dict]]:
    """The roofline's rows by dataset name: "roof" (its outline), "ridge", "points" (the table's rows)
    and, when given, "measured" (kernel times as `core.kernel_times.measured_rows` makes them)."""
    datasets = {"roof": _roof_rows(roof), "ridge": _ridge_rows(roof), "points": roofline_rows(points)}
    if measured:
        datasets["measured"] = measured
    return datasets


def roofline_chart(
    roof: Roof, points: tuple[RooflinePoint, ...], measured: list[dict] | None = None
) -> alt.LayerChart:
    """Log–log roofline of `roof` with `points` on it, and measured kernels as hollow squares when given;
    axes fixed so sliders move marks, not axes."""
    require(
        len(points) <= len(POINT_COLOURS),
        f"The roofline chart has colours for {len(POINT_COLOURS)} operations, got {len(points)}.",
    )
    gpu_name, dtype, names, has_measured = roofline_shape(roof, points, measured=bool(measured))
    layers = [_roof_layer(), _ridge_layers(), _point_layer(names)]
    if has_measured:
        layers.append(_measured_layer())
    return alt.LayerChart(layer=layers).properties(
        title=alt.Title(f"Roofline: {gpu_name}, {dtype}", anchor="start"),
        height=HEIGHT,
        datasets=roofline_datasets(roof, points, measured),
    )


def roofline_description(roof: Roof, points: tuple[RooflinePoint, ...]) -> str:
    """What `roofline_chart` shows, for a screen reader: the roof's flat top and its ridge, then each
    operation's intensity, attainable rate and what bounds it, as the chart places them."""
    placed = "; ".join(
        lessons.sentence(
            "charts",
            "roofline_point",
            name=point.name,
            flop_per_byte=figure(point.flop_per_byte),
            tflops=figure(point.attainable_tflops),
            regime=point.regime,
        )
        for point in points
    )
    return lessons.sentence(
        "charts",
        "roofline",
        gpu=roof.gpu_name,
        dtype=roof.dtype,
        peak_tflops=figure(roof.peak_tflops),
        ridge=figure(roof.ridge_flop_per_byte),
        points=placed,
    )
