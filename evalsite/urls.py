"""URL routes: the REST API under /api/, the admin, and login/logout."""

from django.contrib import admin
from django.urls import include, path

from evalsite.api import api

urlpatterns = [
    path("api/", api.urls),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
]
