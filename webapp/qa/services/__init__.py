"""Everything that changes a question, by job: taking it in (`admission`: validation, the hourly limit, the queue
valve, storing it), handing it to the workers (`publishing`), the pipeline's three stages (`retrieve`, `generate`,
`verify`, sharing `stages`), and how a question ends otherwise (`ending`: cancelled, failed, verified without a
verifier). Views, tasks and commands call these; reads live in `selectors`.
"""
