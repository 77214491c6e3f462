"""The admin's index pages: the state of the indexes, starting jobs, and one job's progress. Admins only."""

from __future__ import annotations

import contextlib
from typing import Any

from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from webapp.accounts.roles import ADMIN, role_required
from webapp.corpus import selectors
from webapp.corpus.forms import IngestPathForm, IngestUploadForm, RebuildForm, SyncUpdatesForm
from webapp.corpus.models import IndexJob
from webapp.corpus.services import starting
from webapp.corpus.services.jobs import IndexJobRefusedError, index_job_cancel
from webapp.corpus.services.local_sources import (
    IngestSourceRejectedError,
    ingest_path_resolve,
    ingest_roots,
    ingest_sources,
)


@require_GET
@role_required(ADMIN)
def index_status(request: HttpRequest) -> HttpResponse:
    return render(request, "corpus/status.html", {"status": selectors.index_status()})


@require_http_methods(["GET", "POST"])
@role_required(ADMIN)
def index_job_new(request: HttpRequest) -> HttpResponse:
    action = request.POST.get("action", "") if request.method == "POST" else ""

    def bound(name: str) -> Any:
        return request.POST if action == name else None  # only the submitted form shows errors

    forms: dict[str, Form] = {
        "path": IngestPathForm(bound("path"), sources=ingest_sources()),
        "upload": IngestUploadForm(bound("upload"), request.FILES if action == "upload" else None),
        "updates": SyncUpdatesForm(bound("updates")),
        "rebuild": RebuildForm(bound("rebuild")),
    }
    if action in forms and forms[action].is_valid():
        form = forms[action]
        try:
            job = _start(action, form.cleaned_data, request)
        except (IngestSourceRejectedError, IndexJobRefusedError) as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("index-job", job_id=job.pk)
    context = {"forms": forms, "roots": ingest_roots(), "action": action}
    return render(request, "corpus/job_new.html", context, status=400 if action else 200)


def _start(action: str, data: dict[str, Any], request: HttpRequest) -> IndexJob:
    user = request.user
    assert user.is_authenticated  # role_required let only admins through
    if action == "path":
        return starting.index_job_start_files(paths=[ingest_path_resolve(path=data["path"])], user=user)
    if action == "upload":
        return starting.index_job_start_upload(upload=data["upload"], user=user)
    if action == "updates":
        return starting.index_job_start_updates(user=user, max_files=data["max_files"])
    return starting.index_job_start_rebuild(user=user)


def _job(job_id: int) -> IndexJob:
    try:
        return selectors.index_job_get(job_id=job_id)
    except IndexJob.DoesNotExist as exc:
        raise Http404("No such job") from exc


@require_GET
@role_required(ADMIN)
def index_job_page(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _job(job_id)
    return render(request, "corpus/job.html", {"job": job, "data": selectors.index_job_data(job=job)})


@require_GET
@role_required(ADMIN)
def index_job_json(request: HttpRequest, job_id: int) -> JsonResponse:
    return JsonResponse(selectors.index_job_data(job=_job(job_id)))


@require_POST
@role_required(ADMIN)
def index_job_cancel_view(request: HttpRequest, job_id: int) -> HttpResponse:
    job = _job(job_id)
    with contextlib.suppress(IndexJobRefusedError):  # finished meanwhile: the page shows how it ended
        index_job_cancel(job_id=job.pk, user=request.user)  # type: ignore[arg-type]
    return redirect("index-job", job_id=job.pk)
