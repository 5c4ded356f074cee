"""The audit page: ``audit -o html`` and ``node -o html``, one self-contained HTML file.

The page renders what the other outputs already hold (``audit``'s per-pod records and the
``node`` command's findings): a summary, a card per node, then the pods with something to
say, grouped by node and rule. Nothing is judged here. It loads nothing (a Content Security
Policy of ``default-src 'none'`` and no script), so it opens from a file or a CI artifact.

Pods arrive in any order and the summary comes first, so listed pods wait in a private
temporary SQLite database (on disk; SQLite sorts them by node and group in bounded memory)
until the input ends. What stays in memory is per node: counts and one card. The database
is SQLite's anonymous one: its file in ``$TMPDIR`` is created readable by its owner only
(0600) and removed as soon as it is opened, so no signal, not even SIGKILL, leaves pod
names or findings behind. When it cannot be written (a full ``$TMPDIR``) the writer raises
:class:`SpoolError` before a byte of the page is written.
"""

from __future__ import annotations

import html
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from kubelet_winnet._lint.node_config import DNS_SAID, dns_said
from kubelet_winnet._lint.node_rules import NODE_RULES, NODE_RULES_BY_ID, node_rule_page
from kubelet_winnet._lint.rules import RULES, Rule, help_url, rule_page
from kubelet_winnet._printable import clip, printable
from kubelet_winnet.errors import WinnetError

__all__ = ["CSP", "PALETTE", "CardFinding", "NodeCard", "PageWriter", "SpoolError",
           "write_node_page"]


class SpoolError(WinnetError, OSError):
    """The page's pods could not be held in ``$TMPDIR`` until the input ended (SQLite's
    text, such as "database or disk is full"): the page is not written."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        OSError.__init__(self, reason)

    def __str__(self) -> str:
        return (f"-o html: the page is not written: its pods could not be held in $TMPDIR "
                f"({tempfile.gettempdir()}) until the input ended: {self.reason}; free "
                "space there, or set TMPDIR to a folder with room")

CSP = "default-src 'none'; style-src 'unsafe-inline'"

# (text colour, background) of each badge and surface; every pair meets WCAG 2 AA for
# normal text (contrast >= 4.5:1; tests/cli/test_audit_page.py computes it).
PALETTE: Mapping[str, tuple[str, str]] = {
    "page": ("#1b1b1b", "#ffffff"),
    "card": ("#1b1b1b", "#f3f4f6"),
    "muted": ("#4a4a4a", "#f3f4f6"),
    "link": ("#0b4fb3", "#ffffff"),
    "error": ("#ffffff", "#a4161a"),
    "warning": ("#1b1b1b", "#f5c24b"),
    "info": ("#ffffff", "#1f5fa8"),
    "ok": ("#ffffff", "#22662b"),
    "bad": ("#ffffff", "#a4161a"),
    "unknown": ("#1b1b1b", "#d9dce1"),
    "refused": ("#ffffff", "#6b2c91"),
    "banner": ("#1b1b1b", "#fde2e1"),
}
# The hostNetwork effect (audit's EFFECTS) → badge.
_EFFECT_STYLE = {"not-requested": "unknown", "applied": "ok", "ignored": "bad",
                 "unknown": "unknown", "refused": "refused", "not-modelled": "unknown",
                 "no-network": "bad"}
# Effects that are not what the pod asks for (an outcome not known: PodRow.outcome_known).
_NOT_ASKED = ("ignored", "refused", "no-network")
_UNSCHEDULED = ""  # the key of pods without a node (no node is named "")
_BATCH = 500  # listed pods held before they go to the spool
# Rows written, per node and group and in all (about 430 bytes each: a page of at most
# ~20 MB); the pods past them are counted in their group's heading.
_GROUP_ROWS = 2_000
_ROWS = 40_000


class _Finding(Protocol):
    @property
    def rule(self) -> str: ...
    @property
    def severity(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def field(self) -> str: ...
    @property
    def ignored(self) -> str | None: ...


class PodRow(Protocol):
    """What the page reads of one of ``audit``'s records (``cli.audit.PodAudit``)."""

    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def node(self) -> str: ...
    @property
    def kubelet_version(self) -> str: ...
    @property
    def kubelet_source(self) -> str: ...
    @property
    def runtime(self) -> str: ...
    @property
    def effect(self) -> str: ...
    @property
    def refused(self) -> str | None: ...
    @property
    def note(self) -> str: ...
    @property
    def findings(self) -> tuple[_Finding, ...]: ...
    @property
    def on_node(self) -> dict[str, Any] | None: ...
    @property
    def outcome_known(self) -> bool: ...

    @property
    def sent(self) -> str: ...


@dataclass(frozen=True)
class CardFinding:
    rule: str  # a node rule's id
    severity: str
    message: str
    where: str  # file:line
    ignored: str | None = None


@dataclass(frozen=True)
class NodeCard:
    """One node as ``node`` (its files) and the Node object know it."""

    name: str
    kubelet: str = ""
    runtime: str = ""
    gates: str = ""  # the kubelet's feature gates, as far as known
    handlers: tuple[tuple[str, str], ...] = ()  # (handler, isolation)
    default_handler: str = ""
    handlers_from: str = ""  # where the handlers come from
    port_mappings: tuple[str, str] = ("", "")  # (applied/dropped/unknown, why)
    proxy_gates: str = ""
    findings: tuple[CardFinding, ...] = ()
    classes: tuple[tuple[str, str, str, str, str, str], ...] = ()  # node: pod class rows
    note: str = ""


def _e(text: object, size: int = 300) -> str:
    """Text from the cluster, escaped: the shared escaping rule, clipped, then HTML's."""
    return html.escape(clip(printable(str(text)), size))


def _badge(style: str, text: str) -> str:
    return f'<span class="b {style}">{_e(text)}</span>'


def _css() -> str:
    rules = [f".{name}{{color:{fg};background:{bg}}}" for name, (fg, bg) in PALETTE.items()]
    return (
        "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;"
        f"padding:1.5rem 2rem;color:{PALETTE['page'][0]};background:{PALETTE['page'][1]}}}"
        f"a{{color:{PALETTE['link'][0]}}}h1{{font-size:1.6rem;margin:0 0 .3rem}}"
        "h2{font-size:1.25rem;margin:2rem 0 .6rem;border-bottom:2px solid #1b1b1b}"
        "h3{font-size:1.05rem;margin:1.2rem 0 .4rem}h4{font-size:.95rem;margin:.8rem 0 .3rem}"
        ".tiles{display:flex;flex-wrap:wrap;gap:.6rem}.tile{padding:.6rem .9rem;"
        "border-radius:6px;min-width:9rem}.tile b{display:block;font-size:1.5rem}"
        ".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(25rem,1fr));"
        "gap:.8rem}.card{border-radius:8px;padding:.8rem 1rem;border:1px solid #b8bcc4}"
        ".card h3{margin-top:0}dl{display:grid;grid-template-columns:max-content 1fr;"
        "gap:.15rem .8rem;margin:0}dt{font-weight:600}dd{margin:0;overflow-wrap:break-word}"
        ".b{display:inline-block;padding:0 .4rem;border-radius:4px;font-size:.85rem;"
        "font-weight:600}table{border-collapse:collapse;width:100%;margin-bottom:.6rem}"
        "th,td{text-align:left;vertical-align:top;padding:.3rem .5rem;"
        "border-top:1px solid #c9ccd2;overflow-wrap:break-word}"
        "th[scope=row]{overflow-wrap:anywhere}"
        "td ul{margin:0;padding-left:1.1rem}.banner{padding:.6rem 1rem;border-radius:6px}"
        ".one{max-width:72rem}.w3{width:26%}.w2{width:18%}dl.sum{margin-top:.8rem}"
        "pre{white-space:pre-wrap;font-size:.85rem}details{margin:.3rem 0}"
        + "".join(rules)
    )


class _Counts:
    __slots__ = ("listed", "not_asked", "pods", "unknown")

    def __init__(self) -> None:
        self.pods = self.listed = self.not_asked = self.unknown = 0


class PageWriter:
    """``audit -o html``: :meth:`add` each record, then :meth:`close` writes the page.
    ``cards(name)`` is the node's card (a node not in the input, or not read, gets a bare
    one); ``effect_text`` is audit's column text of each hostNetwork effect."""

    def __init__(self, out: TextIO, cards: Callable[[str], NodeCard],
                 node_names: Callable[[], Iterable[str]], effect_text: Mapping[str, str],
                 docs_url: str | None) -> None:
        self._out = out
        self._cards = cards
        self._node_names = node_names
        self._effect_text = effect_text
        self._docs_url = docs_url
        self._nodes: dict[str, _Counts] = {}
        # (node, group rank) -> [pods, pods written]
        self._groups: dict[tuple[str, int], list[int]] = {}
        self._rules: set[str] = set()  # rule pages to link or embed
        # --node-config: pods with their own DNS settings, by what becomes of them
        self._dns: dict[str, int] = {}
        self._batch: list[tuple[str, int, int, str]] = []
        self._seq = 0
        # "": SQLite's private temporary database (see the module's docstring).
        self._db = sqlite3.connect("")
        self._spool("PRAGMA journal_mode=OFF")  # no rollback journal: a second file
        self._spool("CREATE TABLE pod (node TEXT, rank INTEGER, seq INTEGER, html TEXT)")

    def _spool(self, sql: str, rows: list[tuple[str, int, int, str]] | None = None) -> None:
        """One statement on the spool; what SQLite cannot do is a :class:`SpoolError`."""
        try:
            if rows is None:
                self._db.execute(sql)
            else:
                self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            self._db.close()
            raise SpoolError(str(exc)) from None

    def add(self, record: PodRow) -> None:
        node = record.node
        counts = self._nodes.get(node)
        if counts is None:
            counts = self._nodes[node] = _Counts()
        counts.pods += 1
        not_asked = _not_asked(record)
        counts.not_asked += not_asked
        counts.unknown += not record.outcome_known
        said = dns_said(record.on_node)
        if said is not None:
            self._dns[said] = self._dns.get(said, 0) + 1
        rank = _group(record, not_asked)
        if rank is None:
            return
        counts.listed += 1
        group = self._groups.get((node, rank))
        if group is None:
            group = self._groups[node, rank] = [0, 0]
        group[0] += 1
        if group[1] >= _GROUP_ROWS or self._seq >= _ROWS:
            return  # counted in its group's heading, not written
        group[1] += 1
        self._batch.append((node, rank, self._seq, self._pod_html(record)))
        self._seq += 1
        if len(self._batch) >= _BATCH:
            self._flush()

    def _flush(self) -> None:
        self._spool("INSERT INTO pod VALUES (?, ?, ?, ?)", self._batch)
        self._batch = []

    def _verdict(self, record: PodRow) -> str:
        """The verdict's badges: what becomes of hostNetwork, then each hostPort the pod
        does not get (dropped) or whose outcome is not known, and what becomes of the
        pod's own DNS settings on its node (in the words of the other outputs)."""
        effect = record.effect
        badges = [] if effect == "not-requested" else [
            _badge(_EFFECT_STYLE[effect], f"hostNetwork {self._effect_text[effect]}")]
        if record.on_node is not None and effect != "refused":
            for port in record.on_node["hostPorts"]:
                outcome = port["outcome"]
                if outcome in ("dropped", "unknown"):
                    badges.append(_badge(
                        "bad" if outcome == "dropped" else "unknown",
                        f"hostPort {port['hostPort']} "
                        + ("not mapped" if outcome == "dropped" else "not known")))
            said = dns_said(record.on_node)
            if said is not None:
                badges.append(_badge(_DNS_STYLE[said], f"DNS settings {said}"))
        return " ".join(badges) or _badge("unknown", "hostNetwork not requested")

    def _rule_link(self, rule_id: str) -> str:
        self._rules.add(rule_id)
        url = help_url(rule_id, self._docs_url) if self._docs_url else f"#rule-{rule_id}"
        return f'<a href="{html.escape(url or "")}">{_e(rule_id)}</a>'

    def _pod_html(self, record: PodRow) -> str:
        reasons = []
        if record.refused:
            reasons.append(f"<li>the kubelet refuses it: {_e(record.refused, 600)}</li>")
        for f in record.findings:
            text = (f"{_badge(f.severity, f.severity)} {self._rule_link(f.rule)}: "
                    f"{_e(f.message, 600)}")
            if f.ignored is not None:
                text = f"<s>{text}</s> (ignored by annotation: {_e(f.ignored)})"
            reasons.append(f"<li>{text}</li>")
        if record.note:
            reasons.append(f"<li>{_e(record.note, 1000)}</li>")
        kubelet = record.kubelet_version + (
            "" if record.kubelet_source == "node" else " (--kubelet-version)")
        return (
            f"<tr><th scope=row>{_e(record.namespace)}/<b>{_e(record.name)}</b></th>"
            f"<td>{self._verdict(record)}"
            f"<br>sent: {_e(record.sent)}<br><small>kubelet {_e(kubelet, 80)}</small></td>"
            f"<td><ul>{''.join(reasons)}</ul></td></tr>\n"
        )

    def close(self, summary: dict[str, Any], totals: Any, rules: set[str]) -> None:
        """Write the page: summary, node cards, the listed pods, the rule pages."""
        del rules  # the page links the rules its pods name
        # Everything the spool must still hold, before the page's first byte: a spool
        # that cannot take it leaves no page at all.
        self._flush()
        self._spool("CREATE INDEX pod_order ON pod (node, rank, seq)")
        names = sorted((set(self._node_names()) | set(self._nodes)) - {_UNSCHEDULED})
        cards = [self._cards(name) for name in names]
        ids = {name: f"node-{i}" for i, name in enumerate(names)}
        ids[_UNSCHEDULED] = "node-unscheduled"
        write = self._out.write
        pods = totals.pods
        listed = sum(c.listed for c in self._nodes.values())
        title = (f"Windows pod networking: {pods} pod{'s' * (pods != 1)} on "
                 f"{summary['windowsNodes']} Windows node{'s' * (summary['windowsNodes'] != 1)}")
        write(_head(title))
        source = "a dump" if summary["source"] == "dump" else "a live cluster"
        write(f"<p>kubelet-winnet audit of {source}; pods without a node judged as kubelet "
              f"{_e(summary['defaultKubelet'], 40)}"
              + (f", every kubelet with --feature-gates {_e(summary['featureGates'])}"
                 if summary["featureGates"] else "") + ".</p>\n")
        if "error" in summary:
            write(f'<p class="banner">Incomplete: the cluster could not be read: '
                  f"{_e(summary['error'], 2000)}</p>\n")
        write(self._summary(summary, totals, cards, listed))
        write('<h2 id="nodes">Nodes</h2>\n<div class="cards">\n')
        for card in cards:
            write(self._card_html(card, ids[card.name], self._nodes.get(card.name)))
        write("</div>\n")
        self._pods_section(ids, pods - listed)
        self._rules_section()
        write("</body>\n</html>\n")
        self._db.close()

    def _summary(self, summary: dict[str, Any], totals: Any, cards: list[NodeCard],
                 listed: int) -> str:
        effects = totals.effects
        not_asked = sum(c.not_asked for c in self._nodes.values())
        unknown = totals.not_known
        sev = totals.severities
        one = (not_asked == 1, unknown == 1)
        tiles = [
            ("card", f"{summary['nodes']}", f"node{'s' * (summary['nodes'] != 1)}, "
             f"{summary['windowsNodes']} Windows"),
            ("card", f"{totals.pods}", f"Windows pod{'s' * (totals.pods != 1)}"),
            ("bad" if not_asked else "ok", f"{not_asked}",
             "pod whose networking is not what it asks for" if one[0]
             else "pods whose networking is not what they ask for"),
            ("unknown", f"{unknown}",
             f"pod{'' if one[1] else 's'} whose outcome is not known"),
            *((label if sev[label] else "card", f"{sev[label]}",
               _plural(sev[label], label).split(" ", 1)[1])
              for label in ("error", "warning", "info")),
        ]
        text = '<h2 id="summary">Summary</h2>\n<div class="tiles">' + "".join(
            f'<div class="tile {style}"><b>{value}</b>{_e(label)}</div>'
            for style, value, label in tiles) + '</div>\n<dl class="sum">'
        kubelets = _seen(c.kubelet for c in cards if c.kubelet)
        runtimes = _seen(c.runtime for c in cards if c.runtime)
        skipped = summary["skipped"]
        rows = [
            ("hostNetwork", ", ".join(f"{self._effect_text[k]} {v}" for k, v in effects.items()
                                      if v and k != "not-requested") or "no pod asks for it"),
            *((("own DNS settings", ", ".join(
                f"{said} {self._dns[said]}" for said in DNS_SAID.values() if said in self._dns)
                + " (of the pods with dnsPolicy None or Default or a dnsConfig, each on "
                "its node as --node-config knows it)"),) if self._dns else ()),
            ("kubelet releases", kubelets or "none reported"),
            ("runtime releases", runtimes or "none reported"),
            ("pods listed below", f"{listed}; {totals.pods - listed} with nothing to say are "
             "counted, not listed"),
            ("ignored by annotation", _plural(totals.ignored_by_annotation, "finding")),
            ("not audited", f"{_plural(skipped['linux-node'], 'pod')} on Linux nodes, "
             f"{skipped['not-windows-targeted']} without a Windows node or target, "
             f"{skipped.get('finished', 0)} finished (Succeeded or Failed)"),
        ]
        return text + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v, 2000)}</dd>" for k, v in rows) \
            + "</dl>\n"

    def _card_html(self, card: NodeCard, anchor: str, counts: _Counts | None) -> str:
        rows = _card_rows(card, self._rule_link)
        if counts is not None:
            rows.append(("pods", f"{counts.pods} Windows pods, "
                         f"<a href=\"#pods-{anchor}\">{counts.listed} listed</a>"
                         + (f", {counts.not_asked} not getting what they ask for"
                            if counts.not_asked else "")
                         + (f", {counts.unknown} whose outcome is not known"
                            if counts.unknown else "")))
        return _card(card, anchor, rows)

    def _pods_section(self, ids: Mapping[str, str], quiet: int) -> None:
        write = self._out.write
        write('<h2 id="pods">Pods with something to say</h2>\n')
        write(f"<p>{quiet} pod{'s' * (quiet != 1)} with nothing to say (what they ask for "
              "is what they get, no finding) are counted, not listed.</p>\n")
        node_of_last = None
        for node, rank in sorted(self._groups, key=lambda k: (k[0] == _UNSCHEDULED, k)):
            if node != node_of_last:
                anchor = ids[node]
                write(f'<h3 id="pods-{anchor}">pods without a node</h3>\n'
                      if node == _UNSCHEDULED else f'<h3 id="pods-{anchor}">{_e(node)} '
                      f'<a href="#{anchor}">(node card)</a></h3>\n')
                node_of_last = node
            write(self._group_heading(rank, *self._groups[node, rank]))
            write('<table><tr><th class="w3">pod</th><th class="w2">verdict</th>'
                  "<th>reasons</th></tr>\n")
            try:  # a read that fails now (an I/O error) cuts the page short
                for (row,) in self._db.execute(
                        "SELECT html FROM pod WHERE node = ? AND rank = ? ORDER BY seq",
                        (node, rank)):
                    write(row)
            except sqlite3.Error as exc:
                raise SpoolError(str(exc)) from None
            write("</table>\n")

    def _group_heading(self, rank: int, count: int, written: int) -> str:
        pods = f"{count} pod{'s' * (count != 1)}" + (
            f"; the first {written} shown, -o json lists every one" if written < count else "")
        if rank < len(_RANKED):
            rule = _RANKED[rank]
            return (f"<h4>{self._rule_link(rule.id)} "
                    f"{_badge(rule.severity.label, rule.severity.label)} {_e(rule.summary)} "
                    f"({pods})</h4>\n")
        return f"<h4>{_e(_OUTCOME_GROUPS[rank - len(_RANKED)])} ({pods})</h4>\n"

    def _rules_section(self) -> None:
        if not self._docs_url:
            _rule_pages(self._out, self._rules)


# Each pod is listed once, under its most severe finding's rule (then the rules' order;
# with --node-config a row's finding may be a node rule: a hostPort the node drops); a pod
# without a finding is listed under its outcome.
_RANKED: tuple[Rule, ...] = tuple(sorted((*RULES, *NODE_RULES), key=lambda r: -r.severity))
_RANK = {rule.id: i for i, rule in enumerate(_RANKED)}
_OUTCOME_GROUPS = (
    "refused by the kubelet, no active finding",
    "hostNetwork not what the pod asks for, no active finding",
    "on its node: refused, a hostPort not mapped, or its own DNS settings ignored; no "
    "active finding",
    "outcome not known, no active finding",
)


# What becomes of a pod's own DNS settings (the verdict's DnsPlan outcome) → badge.
_DNS_STYLE = {DNS_SAID[outcome]: style for outcome, style in {  # by the words said
    "applied": "ok", "partly": "bad", "dropped": "bad", "host": "bad", "host, asked": "ok",
    "unknown": "unknown"}.items()}
# The outcomes node-dns-dropped says: the pod does not get the DNS settings it asks for.
_DNS_NOT_ASKED = ("partly", "dropped")


def _not_asked(record: PodRow) -> bool:
    if record.effect in _NOT_ASKED:
        return True
    on_node = record.on_node
    return on_node is not None and bool(on_node["refused"] or any(
        p["outcome"] == "dropped" for p in on_node["hostPorts"]) or (
        dns_said(on_node) is not None and on_node["dns"]["outcome"] in _DNS_NOT_ASKED))


def _group(record: PodRow, not_asked: bool) -> int | None:
    """The pod's group (its rank on the page), or None: nothing to say."""
    live = [f for f in record.findings if f.ignored is None]
    if live:
        return min(_RANK[f.rule] for f in live)
    base = len(_RANKED)
    if record.effect == "refused":
        return base
    if record.effect in _NOT_ASKED:
        return base + 1
    if not_asked:
        return base + 2
    if not record.outcome_known:
        return base + 3
    return None


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1 and word != 'info')}"


def _seen(values: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    shown = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join(f"{clip(printable(v), 60)} ({n} node{'s' * (n != 1)})"
                     for v, n in shown[:12])
    return text + (f", and {len(shown) - 12} more" if len(shown) > 12 else "")


def _card_rows(card: NodeCard, link: Callable[[str], str]) -> list[tuple[str, str]]:
    handlers = ", ".join(
        f"{_e(name, 80)} ({_e(isolation, 20)}{', default' if name == card.default_handler else ''})"
        for name, isolation in card.handlers)
    outcome, why = card.port_mappings
    rows = [
        ("kubelet", _e(card.kubelet or "not reported", 80)),
        ("feature gates", _e(card.gates or "not known", 600)),
        ("runtime", _e(card.runtime or "not reported", 80)),
        ("handlers", (handlers + (f" <small>{_e(card.handlers_from)}</small>"
                                  if card.handlers_from else "")) if handlers
         else _e(card.handlers_from or "not known")),
        ("CNI port mappings", f"{_badge(_PORT_STYLE.get(outcome, 'unknown'), outcome)} "
         f"{_e(why, 600)}" if outcome else _e(why or "not known without --node-config")),
        ("kube-proxy gates", _e(card.proxy_gates or "not known", 600)),
    ]
    found = []
    for f in card.findings:
        text = f"{_badge(f.severity, f.severity)} {link(f.rule)}: {_e(f.message, 600)}" \
            + (f" <small>{_e(f.where)}</small>" if f.where else "")
        if f.ignored is not None:
            text = f"<s>{text}</s> (ignored: {_e(f.ignored)})"
        found.append(f"<li>{text}</li>")
    rows.append(("node findings", f"<ul>{''.join(found)}</ul>" if found else "none"))
    return rows


_PORT_STYLE = {"applied": "ok", "dropped": "bad", "unknown": "unknown"}


def _card(card: NodeCard, anchor: str, rows: list[tuple[str, str]]) -> str:
    text = (f'<article class="card" id="{anchor}"><h3>{_e(card.name)}</h3>'
            + (f'<p class="muted">{_e(card.note, 600)}</p>' if card.note else "")
            + "<dl>" + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>")
    if card.classes:
        text += ("<h4>what each pod class gets</h4><table><tr><th>pod class</th>"
                 "<th>isolation</th><th>network</th><th>hostPort</th><th>DNS</th><th>why</th>"
                 "</tr>"
                 + "".join("<tr>" + "".join(f"<td>{_e(c, 600)}</td>" for c in row) + "</tr>"
                           for row in card.classes) + "</table>")
    return text + "</article>\n"


def _head(title: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{_css()}</style>\n</head>\n<body>\n"
        f"<h1>{_e(title)}</h1>\n"
    )


def write_node_page(out: TextIO, card: NodeCard, docs_url: str | None) -> None:
    """``node -o html``: the same page for one node's files: its card alone."""
    links: set[str] = set()

    def link(rule_id: str) -> str:
        links.add(rule_id)
        url = help_url(rule_id, docs_url) if docs_url else f"#rule-{rule_id}"
        return f'<a href="{html.escape(url or "")}">{_e(rule_id)}</a>'

    out.write(_head(f"Windows node {clip(printable(card.name), 120)}"))
    out.write('<div class="one">' + _card(card, "node-0", _card_rows(card, link)) + "</div>\n")
    if not docs_url:
        _rule_pages(out, links)
    out.write("</body>\n</html>\n")


def _rule_pages(out: TextIO, rule_ids: set[str]) -> None:
    """Without --docs-url, each linked rule's page embedded (its markdown, as text)."""
    if not rule_ids:
        return
    out.write('<h2 id="rules">Rules</h2>\n')
    for rule_id in sorted(rule_ids):
        page = node_rule_page(rule_id) if rule_id in NODE_RULES_BY_ID else rule_page(rule_id)
        out.write(f'<details id="rule-{rule_id}"><summary>{_e(rule_id)}</summary>'
                  f"<pre>{html.escape(page)}</pre></details>\n")
