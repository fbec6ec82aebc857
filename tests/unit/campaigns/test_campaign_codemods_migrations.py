"""CodemodTest cases for the pydantic-v2 codemod (the retire-api ones are in
test_campaign_codemods_retire_api.py)."""

from __future__ import annotations

from libcst.codemod import CodemodTest

from fleet.campaigns.codemods import MigratePydanticV2Command


class TestMigratePydanticV2(CodemodTest):
    TRANSFORM = MigratePydanticV2Command

    def test_a_config_base_class_import_goes_when_unused(self) -> None:
        # fastapi-utils 0.2.1 api_model.py: ``class Config(BaseConfig)`` left ``BaseConfig``
        # imported (a deprecated name in v2) and unused
        before = """
            from pydantic import BaseConfig, BaseModel


            class APIModel(BaseModel):
                class Config(BaseConfig):
                    orm_mode = True
        """
        after = """
            from pydantic import BaseModel, ConfigDict


            class APIModel(BaseModel):
                model_config = ConfigDict(from_attributes=True)
        """
        self.assertCodemod(before, after)
        still_used = """
            from pydantic import BaseConfig, BaseModel


            class APIModel(BaseModel):
                class Config(BaseConfig):
                    orm_mode = True


            DEFAULTS = BaseConfig
        """
        kept = """
            from pydantic import BaseConfig, BaseModel, ConfigDict


            class APIModel(BaseModel):
                model_config = ConfigDict(from_attributes=True)


            DEFAULTS = BaseConfig
        """
        self.assertCodemod(still_used, kept)

    def test_validators_config_and_methods(self) -> None:
        before = '''
            from pydantic import BaseModel, root_validator, validator


            class User(BaseModel):
                name: str  # shown

                class Config:
                    orm_mode = True
                    allow_mutation = False

                @validator("name", pre=True, allow_reuse=True)
                def strip(cls, v):
                    return v.strip()

                @root_validator(pre=True)
                def fill(cls, values):
                    return values

                def payload(self):
                    return self.dict()


            def load(raw: dict, resp) -> str:
                user = User.parse_obj(raw)
                resp.json()
                return user.json()
        '''
        after = '''
            from pydantic import BaseModel, ConfigDict, field_validator, model_validator
            import json


            class User(BaseModel):
                name: str  # shown

                model_config = ConfigDict(from_attributes=True, frozen=True)

                @field_validator("name", mode="before")
                @classmethod
                def strip(cls, v):
                    return v.strip()

                @model_validator(mode="before")
                @classmethod
                def fill(cls, values):
                    return values

                def payload(self):
                    return self.model_dump()


            def load(raw: dict, resp) -> str:
                user = User.model_validate(raw)
                resp.json()
                return json.dumps(user.model_dump(mode="json"))
        '''  # json_output: v1, the default: v1's .json() text
        self.assertCodemod(before, after)

    def test_v1_compat_module_is_repointed(self) -> None:
        before = """
            from acme_compat.pydantic_v1 import BaseModel, Field, validator


            class Plan(BaseModel):
                seats: int = Field(1)

                @validator("seats")
                def positive(cls, v):
                    return v
        """
        after = """
            from pydantic import BaseModel, Field, field_validator


            class Plan(BaseModel):
                seats: int = Field(1)

                @field_validator("seats")
                @classmethod
                def positive(cls, v):
                    return v
        """
        self.assertCodemod(before, after, v1_modules=["acme_compat.pydantic_v1"])

    def test_left_for_an_agent(self) -> None:
        code = """
            from pydantic import BaseModel, validator


            class Order(BaseModel):
                @validator("items", each_item=True)
                def item(cls, v):
                    return v


            def dump(thing):
                return thing.dict()
        """
        self.assertCodemod(
            code,
            code,
            expected_warnings=[
                "@validator(each_item=/always=) has no direct v2 form; left as is",
            ],
        )

    def test_compat_import_kept_while_v1_validators_remain(self) -> None:
        before = """
            from acme_compat.pydantic_v1 import BaseModel, validator


            class Order(BaseModel):
                @validator("items", always=True)
                def item(cls, v):
                    return v

                def dump(self):
                    return self.dict()
        """
        after = """
            from acme_compat.pydantic_v1 import BaseModel, validator


            class Order(BaseModel):
                @validator("items", always=True)
                def item(cls, v):
                    return v

                def dump(self):
                    return self.model_dump()
        """
        self.assertCodemod(
            before,
            after,
            v1_modules=["acme_compat.pydantic_v1"],
            expected_warnings=["@validator(each_item=/always=) has no direct v2 form; left as is"],
        )

    def test_parameter_annotated_with_a_model(self) -> None:
        before = """
            from app.models import User


            def show(user: User, other) -> dict:
                return {"u": user.dict(), "o": other.dict()}
        """
        after = """
            from app.models import User


            def show(user: User, other) -> dict:
                return {"u": user.model_dump(), "o": other.dict()}
        """
        self.assertCodemod(before, after, models=["app.models.User"])


class TestMigratePydanticV2PostRootValidator(CodemodTest):
    TRANSFORM = MigratePydanticV2Command

    def test_reading_post_root_validator_becomes_an_after_model_validator(self) -> None:
        before = """
            from pydantic import BaseModel, root_validator


            class Invite(BaseModel):
                role: str
                seat: bool = False

                @root_validator
                def owners_never_get_seats(cls, values: dict) -> dict:
                    \"\"\"Owners are free.\"\"\"
                    if values.get("role") == "owner" and values.get("seat"):
                        raise ValueError("owners are not assigned paid seats")  # why
                    return values


            def echo(body: Invite):
                return Invite.from_orm(body).dict()
        """
        after = """
            from pydantic import BaseModel, model_validator


            class Invite(BaseModel):
                role: str
                seat: bool = False

                @model_validator(mode="after")
                def owners_never_get_seats(self):
                    \"\"\"Owners are free.\"\"\"
                    values = dict(self)
                    if values.get("role") == "owner" and values.get("seat"):
                        raise ValueError("owners are not assigned paid seats")  # why
                    return self


            def echo(body: Invite):
                return Invite.model_validate(body).model_dump()
        """
        self.assertCodemod(before, after)

    def test_mutating_post_root_validator_is_left(self) -> None:
        code = """
            from pydantic import BaseModel, root_validator


            class Invite(BaseModel):
                @root_validator(skip_on_failure=True)
                def fill(cls, values):
                    values["x"] = 1
                    return values
        """
        self.assertCodemod(
            code,
            code,
            expected_warnings=["a post @root_validator that rebinds or mutates values; left as is"],
        )


class TestMigratePydanticV2Imports(CodemodTest):
    TRANSFORM = MigratePydanticV2Command

    def test_import_only_file_is_repointed(self) -> None:
        before = """
            from acme_compat.pydantic_v1 import ValidationError

            try:
                run()
            except ValidationError:
                pass
        """
        after = """
            from pydantic import ValidationError

            try:
                run()
            except ValidationError:
                pass
        """
        self.assertCodemod(before, after, v1_modules=["acme_compat.pydantic_v1"])

    def test_any_receiver_in_model_files(self) -> None:
        before = """
            from app.models import Plan


            class Catalog:
                def to_json(self, plans: dict[str, Plan]) -> str:
                    return ",".join(plans[n].json() for n in plans)
        """
        after = """
            from app.models import Plan
            import json


            class Catalog:
                def to_json(self, plans: dict[str, Plan]) -> str:
                    return ",".join(json.dumps(plans[n].model_dump(mode="json")) for n in plans)
        """  # json_output: v1, the default
        self.assertCodemod(before, after, models=["app.models.Plan"], any_receiver="model-files")

    def test_any_receiver_not_in_files_without_models(self) -> None:
        code = """
            import requests


            def fetch(url):
                return requests.get(url).json()
        """
        self.assertCodemod(code, code, models=["app.models.Plan"], any_receiver="model-files")
