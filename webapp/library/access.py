"""Who may see a library document: its owner, and nobody else. Reviewers and admins read every question to review
it, but a researcher's library is their own papers (often under licence), not the site's: to everyone else a
document is missing, so its id reveals nothing. A document being deleted is missing to its owner too."""

from __future__ import annotations

from django.http import Http404

from webapp.accounts.roles import RESEARCHER, AnyUser, user_has_role
from webapp.library.models import Document


def document_or_404(*, user: AnyUser, document_id: int) -> Document:
    if not user_has_role(user, RESEARCHER) or user.pk is None:
        raise Http404("No such document.")
    document = Document.objects.filter(pk=document_id, owner__pk=user.pk, deleting=False).first()
    if document is None:
        raise Http404("No such document.")
    return document
