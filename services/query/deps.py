"""What the query service's routes take, as FastAPI dependencies: the shared ports and sign-in
(:mod:`services.deps`) and the answerer, its query engine and the answer model, which the app factory
keeps on ``app.state``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from secondbrain.ports.metadata import Conversations
from services.access import request_runtime
from services.deps import (
    AdminUser,
    CurrentPrincipal,
    CurrentUser,
    MetadataDep,
    ObjectsDep,
    RuntimeDep,
    SettingsDep,
)
from services.query.answer_model import AnswerModel
from services.query.answerer import Answerer
from services.query.engine import QueryEngine

__all__ = ["AdminUser", "AnswerModelDep", "AnswererDep", "ConversationsDep", "CurrentPrincipal", "CurrentUser",
           "EngineDep", "MetadataDep", "ObjectsDep", "RuntimeDep", "SettingsDep"]


async def get_answerer(request: Request) -> Answerer:
    answerer: Answerer = request.app.state.answerer
    return answerer


async def get_engine(request: Request) -> QueryEngine:
    answerer: Answerer = request.app.state.answerer
    return answerer.engine


async def get_answer_model(request: Request) -> AnswerModel:
    model: AnswerModel = request.app.state.answer_model
    return model


async def get_conversations(request: Request) -> Conversations:
    return request_runtime(request).metadata.conversations


AnswererDep = Annotated[Answerer, Depends(get_answerer)]
EngineDep = Annotated[QueryEngine, Depends(get_engine)]
AnswerModelDep = Annotated[AnswerModel, Depends(get_answer_model)]
ConversationsDep = Annotated[Conversations, Depends(get_conversations)]
