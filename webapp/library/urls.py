"""Routes of the library pages."""

from __future__ import annotations

from django.urls import path

from webapp.library import views

urlpatterns = [
    path("library/", views.library, name="library"),
    path("library/upload", views.library_upload, name="library-upload"),
    path("library/<int:document_id>/", views.library_document, name="library-document"),
    path("library/<int:document_id>/view", views.library_document_view, name="library-document-view"),
    path("library/<int:document_id>/file", views.library_document_file, name="library-document-file"),
    path("library/<int:document_id>/delete", views.library_document_delete, name="library-document-delete"),
    path("library/<int:document_id>/index", views.library_document_index, name="library-document-index"),
]
