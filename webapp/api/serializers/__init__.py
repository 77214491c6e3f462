"""What the API reads and writes, per resource: `common` (errors, the token), `questions` (asking, listing,
cancelling), `question_detail` (a question's result), `articles` (sources and articles), `flags`, `watch`
(re-checks, notifications) and `deep_check`. Views import the module of their resource."""
