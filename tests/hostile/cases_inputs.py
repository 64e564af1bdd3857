"""Inputs besides the blueprint: a team template folder from a pull request (`new --templates`), stack
outputs (`render --from-stack`, `inventory --from-stack`), and `-o` naming one of `new`'s own inputs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.hostile.cases_basic import VALID
from tests.hostile.harness import Case

TWO = frozenset({2})
REFUSED = {"*": TWO}
OUT = ["-o", "{out}/x.yaml"]

PARAMS = "description: test\nparams:\n" \
         "  name: {type: str, default: t, pattern: '[a-z][a-z0-9-]{0,39}', help: name}\n" \
         "  nodes: {type: int, default: 2, ge: 1, le: 8, help: nodes}\n"
HEAD = "apiVersion: clusterforge/v1\nkind: Cluster\nname: {{ name }}\ntarget: onprem\n"
BODY = HEAD + "pools: [{name: gpu, hardware: dgx-h100, count: {{ nodes }}}]\n"


def _template(body: str) -> dict[str, str]:
    return {"tpl/t/params.yaml": PARAMS, "tpl/t/blueprint.yaml.j2": body}


def _no_output(tree: Path, out: Path) -> None:
    assert not (out / "x.yaml").exists(), "a refused template still wrote its output"


def _bounded(name: str, problem: str, body: str, says: str = "blueprint.yaml.j2:") -> Case:
    """A template body that must be refused (exit 2, `file:line: message`) quickly and in little memory."""
    return Case(name, problem, {**_template(body), "outside-name.txt": "x"},
                argv=[["new", "t", "--templates", "{tree}/tpl", *OUT]], exits=REFUSED,
                says={"new#0": says}, check=_no_output, seconds=10, rss_mib=256)


TEMPLATE_CASES = [
    _bounded("input-template-include", "a template includes another file",
             HEAD + "{% include '../../outside-name.txt' %}\n", "blueprint.yaml.j2:5: "),
    _bounded("input-template-import", "a template imports another file",
             HEAD + "{% import 'x.j2' as x %}\n", "blueprint.yaml.j2:5: "),
    _bounded("input-template-from-import", "a template imports from another file",
             "{% from 'x.j2' import y %}\n" + BODY, "blueprint.yaml.j2:1: "),
    _bounded("input-template-extends", "a template extends another file",
             "{% extends '/etc/passwd' %}\n", "blueprint.yaml.j2:1: "),
    _bounded("input-template-nested-range", "nested loops over huge ranges",
             HEAD + "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}\n"),
    _bounded("input-template-range-alone", "one range of 10**12 items",
             HEAD + "{% for i in range(10**12) %}{% endfor %}\n"),
    _bounded("input-template-quiet-loops", "nested loops over lists that write nothing",
             HEAD + "{% set l = [0] * 1000 %}{% for a in l %}{% for b in l %}{% for c in l %}"
             "{% endfor %}{% endfor %}{% endfor %}\n"),
    _bounded("input-template-string-repeat", "a string repeated 10**10 times", HEAD + "{{ 'x' * 10**10 }}\n"),
    _bounded("input-template-string-repeat-2", "a string repeated 999999999 times", HEAD + "{{ 'x' * 999999999 }}\n"),
    _bounded("input-template-power", "a huge power", HEAD + "{{ 2 ** 99999999999 }}{{ 7 ** 9 ** 9 }}\n"),
    _bounded("input-template-ljust", "a method asked for a 10 GB string", HEAD + "{{ 'x'.ljust(10**10) }}\n"),
    _bounded("input-template-center-filter", "a filter asked for a 10 GB string",
             HEAD + "{{ 'x' | center(10**10) }}\n"),
    _bounded("input-template-format-width", "a format width of 10**10",
             HEAD + "{{ '{:>9999999999}'.format(1) }}{{ '%9999999999s' % 1 }}\n"),
    _bounded("input-template-namespace-doubling", "a string doubled in a namespace until memory runs out",
             HEAD + "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}"
             "{% endfor %}{{ ns.s }}\n"),
    _bounded("input-template-output-flood", "a template writing gigabytes in small pieces",
             HEAD + "{% for i in range(100000) %}{% for j in range(100000) %}{{ 'x' * 100000 }}{% endfor %}"
             "{% endfor %}\n"),
    _bounded("input-template-recursion", "a macro calling itself",
             HEAD + "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}\n"),
]

OUTPUT_CASES = [
    Case("input-new-output-is-an-input", "new -o names its own policy config, waivers, catalog or template file",
         {**_template(BODY), "waivers.yaml": "waivers: []\n", "policy.yaml": "rules: {}\n",
          "cluster.yaml": VALID},
         argv=[["new", "t", "--templates", "{tree}/tpl", "--waivers", "{tree}/waivers.yaml",
                "-o", "{tree}/waivers.yaml"],
               ["new", "t", "--templates", "{tree}/tpl", "--policy-config", "{tree}/policy.yaml",
                "-o", "{tree}/./policy.yaml"],
               ["new", "t", "--templates", "{tree}/tpl", "-o", "{tree}/tpl/t/blueprint.yaml.j2"],
               ["new", "t", "--templates", "{tree}/tpl", "-o", "{tree}/tpl/new.yaml"]],
         exits=REFUSED, says={"new#0": "is also an input", "new#3": "--templates"}),
]

STACK = {
    "outputs_version": 1, "cluster": "c1", "region": "us-east-1",
    "nodes": [{"name": "c1-controller", "pool": "ctl", "role": "controller", "instance_type": "m7i.2xlarge",
               "instance_id": "i-0123456789abcdef0", "private_ip": "10.0.0.5"},
              {"name": "c1-gpu-0", "pool": "gpu", "role": "compute", "instance_type": "p5.48xlarge",
               "instance_id": "i-0123456789abcdef1", "private_ip": "10.0.0.6"}],
    "controller": {"name": "c1-controller", "private_ip": "10.0.0.5"},
}


def _stack(**changes: object) -> str:
    data = json.loads(json.dumps(STACK))
    for dotted, value in changes.items():
        where = data
        *parents, last = dotted.split("__")
        for part in parents:
            where = where[int(part)] if part.isdigit() else where[part]
        where[last] = value
    return json.dumps(data, indent=2)


def _stack_case(name: str, problem: str, **changes: object) -> Case:
    return Case(name, problem, {"outputs.json": _stack(**changes)},
                argv=[["inventory", "--from-stack", "{tree}/outputs.json"],
                      ["inventory", "--from-stack", "{tree}/outputs.json", "--connection", "ssm"]],
                exits=REFUSED, says={"inventory#0": "outputs.json:"}, seconds=8, rss_mib=256)


STACK_CASES = [
    _stack_case("input-stack-ipv6-zone", "an IPv6 zone id carries a newline and a jinja expression",
                nodes__1__private_ip="::1%\n  {{ lookup('pipe', 'id') }} x"),
    _stack_case("input-stack-controller-zone", "the controller address carries a zone id",
                controller__private_ip="fe80::1%eth0"),
    _stack_case("input-stack-ip-spaces", "an address with spaces around it", nodes__1__private_ip=" 10.0.0.6 "),
    _stack_case("input-stack-ip-leading-zero", "an IPv6 address in a non-canonical form",
                nodes__1__private_ip="0:0:0:0:0:0:0:1"),
    _stack_case("input-stack-instance-id-newline", "an instance id with a newline",
                nodes__1__instance_id="i-0123456789abcdef1\n"),
    _stack_case("input-stack-dns-newline", "an FSx DNS name with a trailing newline",
                lustre={"file_system_id": "fs-0123abcd", "dns_name": "fs-0123abcd.fsx.us-east-1.amazonaws.com\n",
                        "mount_name": "abcdefgh", "mount": "/lustre"}),
]

def _bmc_case(name: str, problem: str, document: str) -> Case:
    """`clusterforge power` reads the BMC document before it asks any BMC or reads credentials: refused at its
    line, with no request sent (the URLs below would reach nowhere on loopback either way)."""
    return Case(name, problem, {"bmcs.yaml": document},
                argv=[["power", "status", "gpu-0001", "--bmcs", "{tree}/bmcs.yaml"]],
                exits=REFUSED, says={"power#0": "bmcs.yaml:"}, seconds=8, rss_mib=256)


BMC_CASES = [
    _bmc_case("input-bmc-url-newline", "a BMC URL whose host carries a newline and a jinja expression",
              'bmcs:\n  gpu-0001: {url: "https://127.0.0.1\\n  {{ lookup(\'pipe\', \'id\') }}"}\n'),
    _bmc_case("input-bmc-url-credentials", "a BMC URL with the password in it",
              'bmcs:\n  gpu-0001: {url: "https://root:calvin@127.0.0.1"}\n'),
    _bmc_case("input-bmc-system-path", "a system id that walks to another Redfish resource",
              'bmcs:\n  gpu-0001: {url: "https://127.0.0.1", system: "../../Managers/1"}\n'),
    _bmc_case("input-bmc-include-outside", "the BMC document includes a file outside its folder",
              "bmcs:\n  gpu-0001: !include /etc/passwd\n"),
    _bmc_case("input-bmc-protocol-module", "a BMC protocol that names a module to import instead of a protocol",
              'bmcs:\n  gpu-0001: {url: "ipmi://127.0.0.1", protocol: "os.system"}\n'),
    _bmc_case("input-bmc-ipmi-over-https", "an IPMI BMC given an https URL, so its login would go to a web server",
              'bmcs:\n  gpu-0001: {url: "https://127.0.0.1", protocol: ipmi}\n'),
    _bmc_case("input-bmc-alias-bomb", "nested aliases in the BMC document",
              "bmcs: {}\n" + "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9) if i else ', '.join(['x'] * 9)}]\n"
                                      for i in range(9))),
]

CASES = [*TEMPLATE_CASES, *OUTPUT_CASES, *STACK_CASES, *BMC_CASES]
