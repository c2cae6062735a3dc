"""The API's Swagger page, from django-ninja's own template and static files, no CDN.

ninja renders its page from local files only when it is an installed app, otherwise
from a CDN. It is not one here (settings.NINJA_DIR says why), so this page renders
ninja's template itself.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from ninja import NinjaAPI
from ninja.openapi.docs import Swagger


class LocalSwagger(Swagger):
    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        auths = api.auth if isinstance(api.auth, list | tuple) else []
        context = {
            "swagger_settings": json.dumps(self.settings, indent=1),
            "api": api,
            "add_csrf": any(getattr(auth, "csrf", False) for auth in auths),
        }
        return render(request, self.template, context)
