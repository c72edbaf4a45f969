"""Entry point of the reseeding check (issue 60 item 5; docs/claims.md "Reseeding check"):
``python -m mpdp.pipeline.reseeding --study <id>``. The logic is :func:`mpdp.multiverse.reseeding.main`;
this module hands it the study registry (a shared layer imports no study)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from mpdp.multiverse import reseeding
from mpdp.studies import registry


def main(argv: Sequence[str] | None = None) -> int:
    return reseeding.main(argv, registry)


if __name__ == "__main__":
    sys.exit(main())
