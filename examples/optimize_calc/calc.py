from oloproof import component, system
from oloproof.models import complete


@system(name="calc", version="1", components={"system_prompt": "You are a calculator."})
def answer(case):
    return {"answer": complete(case["question"], instructions=component("system_prompt"))}
