"""Real tiny CPU trainings with Lightning, transformers and Keras; see FINDINGS.md."""
