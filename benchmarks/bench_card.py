"""card@1 of the evidence card (`ask --backend none`) and a sweep of its weights.

card@1 = the card's first citation covers a gold target of the question. Each answerable
question is retrieved once (the same search, call graph and header similarity as
``askrepo.answer.ask``); every weight setting is then scored on those saved candidates with
``evidence.score_candidates`` alone, so a sweep costs no retrieval:

    python benchmarks/bench_card.py --manifest eval/dev/manifest.json --sweep
    python benchmarks/bench_card.py --repo CLICK --queries eval/click.json --set W_SIM=2.0

``--sweep`` varies one constant at a time around the defaults (``GRID``); ``--set NAME=V``
(repeatable) scores one setting. Retrieval is held fixed: its ``evidence`` stage reads the
same constants, so a setting adopted here is confirmed with ``bench_answers.py``. Each row
prints card@1 and the questions gained / lost against the defaults. The sweep table in
docs/ask.md comes from this script.

``--relations FILE`` writes every card's relation statements ("A calls B", "B is a method of
class C"; one line per statement, prefixed by the question's key, citations dropped), and
``--against OLD`` prints the statements removed and added since such a file — how the card
changes of docs/ask.md were checked, statement by statement:

    python benchmarks/bench_card.py --manifest eval/dev/manifest.json --relations after.json \
        --against before.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from askrepo import evidence  # noqa: E402
from askrepo.answer import card_inputs, card_search_options  # noqa: E402
from askrepo.evaluate import is_hit, load_manifest, load_queries  # noqa: E402
from askrepo.evidence import question_weights, score_candidates  # noqa: E402
from askrepo.ranking import best_first  # noqa: E402
from askrepo.retriever import Retriever  # noqa: E402

# The card's constants and the values a sweep tries for each (the default is added).
GRID: dict[str, list[float]] = {
    "W_NAMED": [2.0, 4.0],
    "W_NAME": [0.5, 1.0, 2.0, 2.5],
    "W_HEAD": [0.5, 1.5, 2.0],
    "W_BODY": [0.5, 1.5, 2.0],
    "W_PRIOR": [0.5, 1.5, 2.0],
    "W_SIM": [0.5, 1.0, 2.0, 2.5],
    "WINDOW_FACTOR": [0.3, 0.7, 1.0],
    "CLASS_FACTOR": [0.4, 0.5, 0.7, 1.0],
    "CONSTRUCTOR_FACTOR": [0.4, 0.8, 1.0],
    "PRIOR_RANK_SHARE": [0.0, 0.25, 0.75, 1.0],
}


@dataclass
class Case:
    """One answerable question's saved candidates and which of them are gold."""

    key: str
    question: str
    hits: list[Any]
    weights: dict[str, float]
    graph: Any
    similarity: list[float] | None
    gold: list[bool]
    project: str | None = None


# (repo, question, k) -> (candidates, weights, graph, similarity): a question two files share
# (Click's eight shared questions) is retrieved once.
_RETRIEVED: dict[tuple[str, str, int], tuple[list[Any], dict[str, float], Any, Any]] = {}


def collect(repo: Path, queries: Path, name: str, k: int) -> list[Case]:
    retriever = Retriever.open(repo)
    cases = []
    for q in load_queries(queries):
        if q.absent:
            continue
        key = (str(repo), q.question, k)
        if key not in _RETRIEVED:
            hits = retriever.search(q.question, card_search_options(k)).hits
            code, graph, sim = card_inputs(q.question, list(hits), retriever)
            cands = code[: evidence.CANDIDATES]
            weights, _ = question_weights(q.question, cands, retriever.project)
            _RETRIEVED[key] = (cands, weights, graph, sim)
        cands, weights, graph, sim = _RETRIEVED[key]
        gold = [any(is_hit(h, t) for t in q.expected) for h in cands]
        cases.append(
            Case(f"{name}:{q.id}", q.question, cands, weights, graph, sim, gold, retriever.project)
        )
    return cases


def picks(cases: list[Case]) -> dict[str, bool]:
    """Whether the card's best candidate is gold, per question, with the module's constants."""
    out = {}
    for c in cases:
        if not c.hits:
            out[c.key] = False
            continue
        s = score_candidates(c.question, c.hits, c.weights, c.graph, c.similarity)
        out[c.key] = c.gold[best_first(s)[0]]
    return out


def relations(cases: list[Case]) -> list[str]:
    """Every card's relation statements, ``"<key> <statement>"``, citation marks dropped."""
    out = []
    for c in cases:
        card = evidence.evidence_card(
            c.question, c.hits, c.graph, similarity=c.similarity, project=c.project
        )
        out += [f"{c.key} " + re.sub(r" (\[\d+\])+\.$", "", r.text) for r in card.relations]
    return out


def scored(cases: list[Case], setting: dict[str, float]) -> dict[str, bool]:
    saved = {name: getattr(evidence, name) for name in setting}
    try:
        for name, value in setting.items():
            setattr(evidence, name, value)
        return picks(cases)
    finally:
        for name, value in saved.items():
            setattr(evidence, name, value)


def row(label: str, res: dict[str, bool], base: dict[str, bool]) -> dict[str, Any]:
    gained = sum(1 for key, ok in res.items() if ok and not base[key])
    lost = sum(1 for key, ok in res.items() if base[key] and not ok)
    return {
        "setting": label,
        "card@1": sum(res.values()),
        "n": len(res),
        "gained": gained,
        "lost": lost,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--manifest", type=Path, help="several repositories (askrepo eval --manifest)")
    ap.add_argument("--repo", type=Path, help="one repository (with --queries)")
    ap.add_argument("--queries", type=Path, nargs="*", default=[], help="question files")
    ap.add_argument("-k", type=int, default=8, help="hits retrieved per question (ask's -k)")
    ap.add_argument("--sweep", action="store_true", help="vary each constant in GRID alone")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=V", help="one setting")
    ap.add_argument("--json", type=Path, help="write the rows here")
    ap.add_argument("--relations", type=Path, help="write every card's relation statements")
    ap.add_argument("--against", type=Path, help="with --relations: an older such file to diff")
    args = ap.parse_args(argv)
    if args.against and not args.relations:
        ap.error("--against needs --relations")

    cases: list[Case] = []
    if args.manifest:
        for e in load_manifest(args.manifest):
            cases += collect(Path(e.repo), Path(e.queries), e.name, args.k)
    elif args.repo and args.queries:
        for qf in args.queries:
            cases += collect(args.repo, qf, args.repo.name, args.k)
    else:
        ap.error("give --manifest, or --repo with --queries")

    base = picks(cases)
    rows = [row("defaults", base, base)]
    if args.set:
        setting = {}
        for item in args.set:
            name, _, value = item.partition("=")
            if not hasattr(evidence, name):
                ap.error(f"{name} is not a constant of askrepo.evidence")
            try:
                setting[name] = float(value)
            except ValueError:
                ap.error(f"--set {item}: give a number, e.g. --set {name}=1.5")
        rows.append(row(" ".join(args.set), scored(cases, setting), base))
    if args.sweep:
        for name, values in GRID.items():
            for value in values:
                rows.append(row(f"{name}={value}", scored(cases, {name: value}), base))
    defaults = {name: getattr(evidence, name) for name in GRID}
    print("defaults: " + ", ".join(f"{k}={v}" for k, v in defaults.items()))
    for r in rows:
        print(f"{r['setting']:28s} card@1 {r['card@1']}/{r['n']}  +{r['gained']} -{r['lost']}")
    if args.json:
        args.json.write_text(json.dumps({"defaults": defaults, "rows": rows}, indent=1))
    if args.relations:
        stated = relations(cases)
        args.relations.write_text(json.dumps(stated, indent=0))
        print(f"{len(stated)} relation statements, {len(set(stated))} distinct: {args.relations}")
        if args.against:
            old = set(json.loads(args.against.read_text()))
            removed, added = sorted(old - set(stated)), sorted(set(stated) - old)
            print(f"removed {len(removed)}, added {len(added)} since {args.against}")
            for line in removed:
                print(f"  - {line}")
            for line in added:
                print(f"  + {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
