// One Persona per speaker within a memory.
CREATE CONSTRAINT persona_key IF NOT EXISTS FOR (n:Persona) REQUIRE (n.memory_id, n.speaker) IS UNIQUE
