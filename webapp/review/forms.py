"""Request parsing for the review pages. Rules about flags live in the services; these only check shapes."""

from __future__ import annotations

from typing import Any

from django import forms

from webapp.review.display import VERDICTS, verdict_text
from webapp.review.models import Flag
from webapp.review.selectors import ANY_STATUS, FlagFilters


class FlagCreateForm(forms.Form):
    # The reason is checked by `flag_create`, so a bad one is refused with the service's own message.
    sentence = forms.IntegerField(min_value=0, error_messages={"required": "say which sentence to flag"})
    reason = forms.CharField(max_length=32, error_messages={"required": "choose a reason"})
    pmid = forms.CharField(max_length=32, required=False)
    comment = forms.CharField(required=False)

    def first_error(self) -> str:
        return next(f"{field}: {errors[0]}" for field, errors in self.errors.items())


class FlagFilterForm(forms.Form):
    status = forms.ChoiceField(
        choices=[*Flag.Status.choices, (ANY_STATUS, "Any status")], required=False, initial=Flag.Status.OPEN
    )
    reason = forms.ChoiceField(choices=[("", "Any reason"), *Flag.Reason.choices], required=False)
    verdict = forms.ChoiceField(
        label="Verifier verdict",
        choices=[("", "Any verdict"), *((verdict, verdict_text(verdict)) for verdict in VERDICTS)],
        required=False,
    )
    created_from = forms.DateField(label="Flagged from", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    created_to = forms.DateField(label="Flagged to", required=False, widget=forms.DateInput(attrs={"type": "date"}))

    @classmethod
    def from_query(cls, query: Any) -> FlagFilterForm:
        """Open flags unless the query names a status: a reviewer arrives at what still needs work."""
        data = query.copy()
        if not data.get("status"):
            data["status"] = Flag.Status.OPEN
        return cls(data)

    def filters(self) -> FlagFilters:
        data = self.cleaned_data
        return FlagFilters(
            status=data["status"] or Flag.Status.OPEN,
            reason=data["reason"],
            verdict=data["verdict"],
            created_from=data["created_from"],
            created_to=data["created_to"],
        )


class FlagCloseForm(forms.Form):
    status = forms.ChoiceField(choices=[(Flag.Status.RESOLVED, "Resolve"), (Flag.Status.DISMISSED, "Dismiss")])
    reviewer_label = forms.ChoiceField(
        label="The right label",
        choices=[("", "— keep the verifier's verdict (dismiss only) —"), *Flag.Label.choices],
        required=False,
    )
    note = forms.CharField(required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 3}))
