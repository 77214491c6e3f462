"""The forms of the page that starts indexing jobs; each names itself in the `action` its button submits."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from webapp.corpus.services.local_sources import SUPPORTED_SUFFIXES, SUPPORTED_TEXT, IngestSource


class IngestPathForm(forms.Form):
    # A free value rendered as a list: the service, not the list, decides what may be read (resolved, inside).
    path = forms.CharField(label="File on the server", widget=forms.Select)

    def __init__(self, *args: Any, sources: list[IngestSource], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        choices = [("", "Choose a file…")] + [
            (str(source.path), f"{source.root.name}/{source.label} ({source.size / 1024:.0f} KB)") for source in sources
        ]
        self.fields["path"].widget.choices = choices


class IngestUploadForm(forms.Form):
    upload = forms.FileField(
        label="Upload a file", widget=forms.ClearableFileInput(attrs={"accept": ",".join(SUPPORTED_SUFFIXES)})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit = settings.VERIMED.limits.upload_max_bytes / (1024 * 1024)
        self.fields["upload"].help_text = f"{SUPPORTED_TEXT}; at most {limit:.0f} MB."


class SyncUpdatesForm(forms.Form):
    max_files = forms.IntegerField(
        label="At most this many files (empty: all still to do)", required=False, min_value=1
    )


class RebuildForm(forms.Form):
    confirm = forms.BooleanField(
        label="Rebuild both indexes from the stored articles into a new generation", required=True
    )
