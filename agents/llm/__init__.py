"""A language model in a seat: the `llm:` agent (agents.llm.agent), its prompts
(agents.llm.prompt) and its exchange log and response cache (agents.llm.store)."""
