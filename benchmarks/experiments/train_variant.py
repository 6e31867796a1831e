"""Train a G+S parser (no labeler) on en_ewt train with dev evaluation after every epoch.

    python train_variant.py --code WORKTREE OUT.npz EPOCHS [field=value ...]

``field=value`` are ModelConfig fields (e.g. ``prune_threshold=1e-6``, ``train_over=Y``,
``labeled_arcs=1`` with labeled_arcs.patch).  The per-epoch dev UAS goes to the log (stderr).
"""
import logging

from _common import corpus, parser, settings, use_code

ap = parser(__doc__)
ap.add_argument("out")
ap.add_argument("epochs", type=int)
ap.add_argument("config", nargs="*")
args = ap.parse_args()
use_code(args)
import depparse  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
kw = settings(args.config)
m = depparse.train(corpus("train"), corpus("dev"), model="gs", epochs=args.epochs,
                   labeler_epochs=0, progress=False, **kw)
m.save(args.out)
