"""Keep the translations of the course in step with its English notebooks.

    python scripts/translate.py update [--lang zh] [SOURCE ...]   # refresh catalogs (start new ones with SOURCE)
    python scripts/translate.py build  [--lang zh]                 # write zh/notebooks/*.ipynb, *.zh-CN.md
    python scripts/translate.py status [--lang zh]                 # what is translated, stale or missing

A source is a lecture notebook (``notebooks/04_scaling.ipynb``), a question bank file
(``sdpa_course/quiz/bank/ch04_scaling.yaml``) or a guide (``README.md``, ``docs/quiz.md``).  ``update`` with no source refreshes the catalogs
that exist; naming a source starts its catalog.  A changed English cell leaves its translation marked fuzzy until a translator updates
it (and removes the fuzzy flag); ``build`` refuses a catalog with stale or missing entries.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sdpa_course.i18n.book import LANGUAGES, Source, all_sources, build, translated_sources, update

ROOT = Path(__file__).resolve().parents[1]


def chosen(args) -> list[Source]:
    if not args.notebooks:
        return translated_sources(ROOT, args.lang)
    known = {source.path.resolve(): source for source in all_sources(ROOT, args.lang)}
    picked = []
    for name in args.notebooks:
        path = Path(name).resolve()
        if path not in known:
            raise SystemExit(f"translate.py: {name} is not one of the sources the course translates")
        picked.append(known[path])
    return picked


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="translate.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("update", "build", "status"))
    parser.add_argument("notebooks", nargs="*", help="English sources (update only; default: those with a catalog)")
    parser.add_argument("--lang", default="zh", choices=sorted(LANGUAGES))
    args = parser.parse_args(argv)
    if args.command == "update":
        for source in chosen(args):
            update(source)
            print(f"updated {source.catalog.relative_to(ROOT)}")
        return 0
    failed = False
    for source in translated_sources(ROOT, args.lang):
        if args.command == "build":
            if not source.is_generated:
                continue
            try:
                print(f"wrote {build(source).relative_to(ROOT)}")
            except ValueError as error:
                failed = True
                print(error, file=sys.stderr)
        else:
            problems = source.problems()
            print(f"{source.name}: {len(source.units())} units, {len(problems)} problem(s)")
            print("".join(f"  {problem}\n" for problem in problems), end="")
            failed |= bool(problems)
    untranslated = [s.name for s in all_sources(ROOT, args.lang) if not s.catalog.exists()]
    if args.command == "status" and untranslated:
        print(f"not translated yet: {', '.join(untranslated)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
