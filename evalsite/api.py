"""The REST API: one NinjaAPI mounting each app's router."""

from ninja import NinjaAPI

api = NinjaAPI(title="oloproof API", version="1", urls_namespace="api")
