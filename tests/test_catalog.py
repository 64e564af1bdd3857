from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.catalog import Instance, Server, Switch, load_catalog
from clusterforge.errors import ClusterforgeError

REQUIRED = [
    "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "hgx-h100-8gpu", "p4d.24xlarge", "p4de.24xlarge",
    "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "trn1.32xlarge", "trn1n.32xlarge",
    "cpu-1u", "qm9700",
]


def test_every_required_key_present() -> None:
    catalog = load_catalog()
    assert set(REQUIRED) <= set(catalog)


@pytest.mark.parametrize(
    ("key", "efa", "cards"),
    [("p5.48xlarge", 32, 32), ("p5e.48xlarge", 32, 32), ("p5en.48xlarge", 16, 16), ("p6-b200.48xlarge", 8, 8),
     ("p4d.24xlarge", 4, 4), ("trn1.32xlarge", 8, 8), ("trn1n.32xlarge", 16, 16)],
)
def test_efa_layouts(key: str, efa: int, cards: int) -> None:
    entry = load_catalog().of(key, Instance)
    assert (entry.efa_max_interfaces, entry.network_cards) == (efa, cards)


@pytest.mark.parametrize(
    ("key", "kw", "u", "redundancy"),
    [("dgx-h100", 10.2, 8, "4+2"), ("dgx-b200", 14.3, 10, "5+1"), ("hgx-h100-8gpu", 11.0, 6, "3+3")],
)
def test_server_figures(key: str, kw: float, u: int, redundancy: str) -> None:
    entry = load_catalog().of(key, Server)
    assert (entry.max_power_kw, entry.u_height, entry.psus.redundancy) == (kw, u, redundancy)


def test_gb200_is_rack_scale_hybrid_with_fraction() -> None:
    entry = load_catalog().of("gb200-nvl72", Server)
    assert entry.form == "rack" and entry.cooling == "hybrid" and 0.7 <= entry.liquid_heat_fraction <= 0.85


def test_switch_ports() -> None:
    assert load_catalog().of("qm9700", Switch).ports == 64


def test_every_figure_has_a_source() -> None:
    for key, entry in load_catalog().items():
        figures = {n for n in entry.model_fields_set} - {"kind", "form", "provider", "description", "sources", "notes"}
        assert figures <= set(entry.sources), key


EXTRA = """\
apiVersion: clusterforge/v1
kind: Catalog
hardware:
  site-gpu:
    kind: server
    description: a site server
    max_power_kw: 5
    psus: {count: 2, required: 1}
    u_height: 4
    weight_kg: 60
    depth_mm: 800
    max_inlet_c: 30
    sources: {max_power_kw: measured, psus: spec, u_height: spec, weight_kg: scale, depth_mm: spec, max_inlet_c: spec}
"""


def test_user_catalog_extends(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(EXTRA)
    catalog = load_catalog([extra])
    assert "site-gpu" in catalog and catalog.origins["site-gpu"] == str(extra)


def test_user_catalog_figure_without_source_is_rejected(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(EXTRA.replace("max_power_kw: measured, ", ""))
    with pytest.raises(ClusterforgeError) as exc:
        load_catalog([extra])
    assert "max_power_kw" in str(exc.value) and exc.value.problems[0].line == 4


def test_user_catalog_cannot_shadow_builtin(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(EXTRA.replace("site-gpu", "dgx-h100"))
    with pytest.raises(ClusterforgeError, match="already defined"):
        load_catalog([extra])


def test_unknown_key_names_closest() -> None:
    with pytest.raises(ClusterforgeError, match=r"did you mean p5\.48xlarge"):
        load_catalog().get("p5.48xlarg")


def test_builtin_files_take_the_fast_parser_with_the_same_data() -> None:
    """Every check loads the built-in catalog; its files stay within what rapidyaml's path takes (no `%` or
    backtick outside words), and both parsers read them the same."""
    from importlib import resources

    from clusterforge.catalog.loader import _BUILTIN_FILES
    from clusterforge.fastyaml import parse_fast
    from clusterforge.yamlsource import parse_text

    def refuse(text: str, file: str) -> None:
        raise AssertionError(f"{file} was declined by the fast path")

    for name in _BUILTIN_FILES:
        text = (resources.files("clusterforge.catalog") / "data" / name).read_text(encoding="utf-8")
        assert parse_fast(text, name, refuse).data == parse_text(text, name).data  # type: ignore[arg-type]
