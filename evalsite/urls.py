"""URL routes: the dashboard, the REST API under /api/, the admin, and login/logout."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from evalsite.api import api

urlpatterns = [
    path("", include("runs.views.urls")),
    path("api/", api.urls),
    path("admin/", admin.site.urls),
    # Only sign-in and sign-out: there is no self-service password reset, so no page
    # is reachable without an account.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
