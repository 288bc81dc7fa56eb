"""Typed application keys shared by the REST modules."""

from __future__ import annotations

import asyncio

from aiohttp import web

from engine.distributed.forwarding import RestClient
from engine.engine import Engine
from engine.plugins.discovery import PluginRegistry

ENGINE = web.AppKey("engine", Engine)
REST_TIMEOUT = web.AppKey("rest_timeout", float)
CLUSTER_ID = web.AppKey("cluster_id", str)
CLUSTER_ID_LOCK = web.AppKey("cluster_id_lock", asyncio.Lock)
PLUGINS = web.AppKey("plugins", PluginRegistry)
REST_CLIENT = web.AppKey("rest_client", RestClient)
DETAILS = web.AppKey("details", bool)  # error.rest.response.message.detail.enabled (engine/rest/quiet.py)
READY = web.AppKey("ready", asyncio.Event)  # the worker has started (engine/rest/health.py)
HEALTH_TIMEOUT = web.AppKey("health_timeout", float)
