"""The learned network: a model of its own, not a feature template.

A BiLSTM over word, character and encoder inputs with biaffine arc and label scorers and tag
heads (Dozat and Manning 2017; the encoder's layers mixed as in Peters et al. 2018), whose
scores enter the part tables beside the sparse features'.  :mod:`depparse.network.biaffine`
holds its parameters and its NumPy forward pass (what parsing runs); its JAX twin and its
training are :mod:`depparse.learn.network_training`.
"""
