"""Sentences into integer arrays: vocabularies (:mod:`.vocab`, reserved ids in :mod:`.ids`)
and the contextual word classes of a small pretrained transformer (:mod:`.context` over the
NumPy MiniLM of :mod:`.minilm`)."""

from .context import ContextClasses
from .vocab import Encoded, Vocab, Vocabularies

__all__ = ["ContextClasses", "Encoded", "Vocab", "Vocabularies"]
