from __future__ import annotations

from pathlib import Path

import pytest

from clusterforge.catalog import Instance, Server, Switch
from clusterforge.core.errors import ClusterforgeError
from clusterforge.target_kernel import load_catalog

REQUIRED = [
    "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "hgx-h100-8gpu", "p4d.24xlarge", "p4de.24xlarge",
    "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "trn1.32xlarge", "trn1n.32xlarge",
    "p6-b300.48xlarge", "trn2.48xlarge", "m5.8xlarge", "m5.4xlarge", "c5.xlarge", "c5.2xlarge",
    "cpu-1u", "qm9700",
]


def test_every_required_key_present() -> None:
    catalog = load_catalog()
    assert set(REQUIRED) <= set(catalog)


@pytest.mark.parametrize(
    ("key", "efa", "cards"),
    [("p5.48xlarge", 32, 32), ("p5e.48xlarge", 32, 32), ("p5en.48xlarge", 16, 16), ("p6-b200.48xlarge", 8, 8),
     ("p4d.24xlarge", 4, 4), ("trn1.32xlarge", 8, 8), ("trn1n.32xlarge", 16, 16), ("p6-b300.48xlarge", 16, 17),
     ("trn2.48xlarge", 16, 16)],
)
def test_efa_layouts(key: str, efa: int, cards: int) -> None:
    entry = load_catalog().of(key, Instance)
    assert (entry.efa_max_interfaces, entry.network_cards) == (efa, cards)


def test_p6_b300_card_0_carries_no_efa() -> None:
    """17 cards, 16 EFA: card 0 is ENA only (AWS engineering, aws-parallelcluster issue 7143)."""
    entry = load_catalog().of("p6-b300.48xlarge", Instance)
    assert not entry.primary_card_efa and list(entry.efa_cards) == list(range(1, 17))
    assert entry.gpus is not None and (entry.gpus.model, entry.gpus.count, entry.gpus.vendor) == ("B300", 8, "nvidia")
    assert (entry.efa_bandwidth_gbps, entry.memory_gib) == (6400, 4096)
    assert all(load_catalog().of(key, Instance).primary_card_efa for key in REQUIRED
               if key.endswith("xlarge") and key != "p6-b300.48xlarge")


@pytest.mark.parametrize("key", ["trn1.32xlarge", "trn1n.32xlarge", "trn2.48xlarge"])
def test_trainium_is_a_gpu_of_vendor_aws(key: str) -> None:
    """The planner reads `gpus` (SLURM GRES gpu on /dev/neuron files); `vendor: aws` picks the Neuron stack."""
    entry = load_catalog().of(key, Instance)
    assert entry.gpus is not None and entry.gpus.vendor == "aws" and entry.gpus.count == 16
    assert entry.accelerators is None


@pytest.mark.parametrize(("key", "threads", "memory"), [
    ("m5.8xlarge", 32, 128), ("m5.4xlarge", 16, 64), ("c5.xlarge", 4, 8), ("c5.2xlarge", 8, 16)])
def test_service_types_from_aws_samples(key: str, threads: int, memory: int) -> None:
    """Head, login and controller types AWS's samples use: no EFA, no GPU, no cluster placement group."""
    entry = load_catalog().of(key, Instance)
    assert entry.cpus is not None and (entry.cpus.threads, entry.memory_gib) == (threads, memory)
    assert (entry.efa_max_interfaces, entry.gpus, entry.placement_group) == (0, None, False)


def test_more_efa_than_cards_that_carry_it_is_refused(tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text("apiVersion: clusterforge/v1\nkind: Catalog\nhardware:\n  x1.big:\n    kind: instance\n"
                     "    description: d\n    efa_max_interfaces: 4\n    network_cards: 4\n"
                     "    primary_card_efa: false\n    efa_bandwidth_gbps: 400\n"
                     "    sources: {efa_max_interfaces: s, network_cards: s, primary_card_efa: s,\n"
                     "              efa_bandwidth_gbps: s}\n")
    with pytest.raises(ClusterforgeError, match="4 EFA interfaces do not fit on 3 network cards that carry EFA"):
        load_catalog([extra])


@pytest.mark.parametrize(
    ("key", "kw", "u", "redundancy"),
    [("dgx-h100", 10.2, 8, "4+2"), ("dgx-b200", 14.3, 10, "5+1"), ("hgx-h100-8gpu", 11.0, 6, "4+2")],
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
    from clusterforge.files.fastyaml import parse_fast
    from clusterforge.files.yamlsource import parse_text

    def refuse(text: str, file: str) -> None:
        raise AssertionError(f"{file} was declined by the fast path")

    from clusterforge.target_kernel import catalog_parts

    shared = [resources.files("clusterforge.catalog") / "data" / name for name in _BUILTIN_FILES]
    for path in [*shared, *(file for part in catalog_parts() for file in part.files)]:  # the targets' files too
        text = path.read_text(encoding="utf-8")
        assert parse_fast(text, path.name, refuse).data == parse_text(text, path.name).data  # type: ignore[arg-type]


@pytest.mark.parametrize(("key", "model", "memory", "cooling"), [
    ("mi300x-8gpu", "MI300X", 192, "air"), ("mi325x-8gpu", "MI325X", 256, "air"),
    ("mi355x-8gpu", "MI355X", 288, "hybrid"),
])
def test_amd_instinct_servers(key: str, model: str, memory: float, cooling: str) -> None:
    """8 AMD GPUs and 8 x 400G per server; every OEM figure is marked unconfirmed, the MI355X is liquid-cooled."""
    entry = load_catalog().of(key, Server)
    assert entry.gpus is not None and (entry.gpus.vendor, entry.gpus.model, entry.gpus.count) == ("amd", model, 8)
    assert entry.gpus.memory_gib == memory and entry.cooling == cooling
    assert entry.nics is not None and (entry.nics.compute, entry.nics.speed_gbps) == (8, 400)
    for figure in ("max_power_kw", "psus", "u_height", "weight_kg", "depth_mm", "nics"):
        assert "[U]" in entry.sources[figure], f"{key}.{figure} has no primary source: it must say [U]"
    if cooling == "hybrid":
        assert 0.5 <= entry.liquid_heat_fraction < 1 and "[U]" in entry.sources["liquid_heat_fraction"]
        assert entry.max_supply_water_c is not None
