"""Everything that changes the corpus, in one place: articles (`articles`), index jobs and their log (`jobs`,
`joblog`), the steps that index one PubMed file (`indexing`), index generations and rebuilds (`generations`,
`rebuild`, `rebuild_job`), syncs with NCBI (`sync`), local files and uploads (`local_sources`), and starting a job
from the site or the schedule (`starting`). Views, commands and tasks call these; reads live in `selectors`.
"""
