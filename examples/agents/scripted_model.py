"""A scripted model for the orders desk: an OpenAI-compatible chat server on 127.0.0.1
whose policy picks the right tools for a task with a known probability.

    python scripted_model.py [--quality 0.8] [--seed 11] [--port 8765] [--log requests.jsonl]

It reads the task from the conversation's last user message (a conversation's earlier
ones name the order). On a task the policy gets right
(`picks_right`: a seeded draw per question, below `--quality`) it looks the order up,
then takes the action the question asks for (refund, cancel, new address), then answers
with the last tool's result. On the others it skips the lookup: it takes the action at
once (which the desk refuses) or, asked where an order is, answers without looking. So
the suite's figures are known: the share of tasks `picks_right` says is right.
"""

import argparse
import json
import random
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ACTIONS = (("refund", "refund"), ("cancel", "cancel_order"), ("send order", "update_address"))


def picks_right(question, quality=0.8, seed=11):
    """Whether the policy gets this task right: a draw seeded by the question alone."""
    return random.Random(f"{seed}:{question}").random() < quality


def planned_calls(question, right, earlier=()):
    """The tool calls the policy makes for a question, in order: (name, arguments). The
    order is the question's, or the last one an earlier message of the conversation named."""
    named = [
        found.group(0) for text in (*earlier, question) if (found := re.search(r"O-\d+", text))
    ]
    order = named[-1]
    action = next((tool for word, tool in ACTIONS if word in question.lower()), None)
    arguments = {"order": order}
    if action == "update_address":
        arguments["address"] = re.search(r" to (.+?) instead", question).group(1)
    calls = [("find_order", {"order": order})] if right else []
    if action is not None:
        calls.append((action, arguments))
    return order, calls


def reply_to(body, quality, seed):
    """The next assistant message for this conversation."""
    messages = body.get("messages") or []
    # A conversation's last user message is the one to act on; its earlier ones say which
    # order it is about, and all of them together seed the draw (a single task: its one).
    asked = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    said = [messages[i]["content"] for i in asked]
    question = said[-1]
    results = [m for m in messages[asked[-1] :] if m.get("role") == "tool"]
    right = picks_right(" / ".join(said), quality, seed)
    order, calls = planned_calls(question, right, said[:-1])
    if len(results) < len(calls):
        name, arguments = calls[len(results)]
        call = {
            "id": f"call_{len(results) + 1}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    text = results[-1]["content"] if results else f"I could not check {order}."
    return {"role": "assistant", "content": text}


def completion(body, message):
    prompt_tokens = len(json.dumps(body.get("messages") or [])) // 4
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": body.get("model") or "scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 12,
            "total_tokens": prompt_tokens + 12,
        },
    }


def serve(quality, seed, port, log):
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            answer = json.dumps(completion(body, reply_to(body, quality, seed))).encode()
            if log:
                with lock, open(log, "a", encoding="utf-8") as handle:
                    handle.write(
                        json.dumps({"path": self.path, "messages": len(body["messages"])}) + "\n"
                    )
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"serving http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quality", type=float, default=0.8)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--log", help="append one line per request to this file")
    args = parser.parse_args()
    serve(args.quality, args.seed, args.port, args.log)
