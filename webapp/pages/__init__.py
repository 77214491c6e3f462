"""The pages that put the apps together, one layer above them: the answer page (a question's answer with its watch
controls, deep check and follow-up section), its JSON, its share links and its exports (Markdown with the deep
check, BibTeX, RIS). `qa`, `watch`, `deepcheck` and `review` never import this package (the layers contract in
pyproject.toml); their own pages and actions stay in their apps.
"""
