"""8 epochs over Z (as shipped), then epochs over Y (dual decomposition, K iterations).

    python y_finetune.py --code REPO CHECKPOINT.npz K
"""
import dataclasses
import logging
import os
import time

from _common import corpus, parser, use_code

ap = parser(__doc__)
ap.add_argument("checkpoint")
ap.add_argument("k", type=int)
ap.add_argument("--y-epochs", type=int, default=3)
args = ap.parse_args()
use_code(args)
import depparse.learn.perceptron as P  # noqa: E402
from depparse.conllu_io import read_conllu  # noqa: E402
from depparse.model import ModelConfig  # noqa: E402

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
tr, dv = read_conllu(corpus("train")), read_conllu(corpus("dev"))
if not os.path.exists(args.checkpoint):
    P.train(tr, dv, ModelConfig(model="gs"), epochs=8, checkpoint=args.checkpoint,
            labeler_epochs=0, progress=False)
st = P.prepare(tr, dv, None, 0, args.checkpoint, True, 1, 4)
t = st.trainer
t.config = dataclasses.replace(t.config, train_over="Y", max_iter=args.k)
for ep in range(args.y_epochs):
    t0 = time.time()
    mistakes = t.run_epoch(st.data)
    r = P.evaluate_heads(st.parser, st.dev, t.averaged())
    print(f"Y epoch {ep + 1}: {mistakes} mistakes, {time.time() - t0:.0f} s, "
          f"dev UAS {r['uas']:.2f}, certificates {r['cert']:.1f}%", flush=True)
