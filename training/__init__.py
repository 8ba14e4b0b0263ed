"""Training code of the shipped demonstration model (the synthetic corpus and the training
script). Not part of the installed luaguard package: the runtime imports nothing from here
(tests/test_training_corpus.py checks it)."""
