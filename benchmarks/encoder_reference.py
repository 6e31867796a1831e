"""Check depparse's NumPy MiniLM forward pass against Hugging Face transformers (PyTorch).

    python benchmarks/encoder_reference.py

Needs ``torch`` and ``transformers`` (not dependencies of depparse; install them in a
separate environment together with depparse's own requirements).  Prints the largest
absolute difference of the hidden states per layer over a few sentences; float32 round-off
is about 1e-5.
"""

from __future__ import annotations

import sys

import numpy as np


def main():
    import torch
    from transformers import BertModel

    from depparse.encoding.minilm import MiniLM, find_encoder

    d = find_encoder()
    ours = MiniLM(d, 6)
    ref = BertModel.from_pretrained(str(d)).eval()
    sentences = ["The old man the boats .", "Don't panic : it's only a test , Café owners said .",
                 " ".join(["word"] * 40), "Übermäßig lange Wörter , naïve façades & 3.14 %"]
    worst = np.zeros(7)
    for text in sentences:
        ids = [ours.cls] + [i for w in text.split() for i in ours.pieces(w)] + [ours.sep]
        with torch.no_grad():
            hidden = ref(torch.tensor([ids]), output_hidden_states=True).hidden_states
        for layer in range(1, 7):
            ours.layers = layer
            diff = np.abs(ours._forward(ids) - hidden[layer][0].numpy()).max()
            worst[layer] = max(worst[layer], float(diff))
    for layer in range(1, 7):
        print(f"layer {layer}: max |numpy - torch| = {worst[layer]:.2e}")
    return 0 if worst.max() < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
