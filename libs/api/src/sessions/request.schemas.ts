import { z } from "zod";
import "@tog/edge"; // extends zod with .openapi()
import { booleanWord, integerParam, MAX_OFFSET } from "../query-params.ts";

// Query, path and body schemas of the session routes. Every rule carries its exact 400 text;
// integers are digits only, an empty value is the same as an absent parameter (as GET /tasks).

/** A session title, counted in Unicode code points (cleaning rules: services/session/src/sessions/title.ts). */
export const TITLE_MAX_CHARS = 60;

export const ListSessionsQuery = z.object({
  limit: integerParam("limit", 1, 100, 20).openapi({ type: "integer", description: "Page size, 1–100.", default: 20 }),
  offset: integerParam("offset", 0, MAX_OFFSET, 0).openapi({
    type: "integer",
    description: "Sessions to skip.",
    default: 0,
  }),
});

export const TurnsQuery = z.object({
  limit: integerParam("limit", 1, 100, 10).openapi({
    type: "integer",
    description: "Turns per page, 1–100.",
    default: 10,
  }),
  offset: integerParam("offset", 0, MAX_OFFSET, 0).openapi({
    type: "integer",
    description: "Turns to skip, oldest first.",
    default: 0,
  }),
  include_payload: z
    .preprocess(
      (v) => (v === undefined || v === "" ? false : booleanWord(v)),
      z.boolean({ error: "Invalid include_payload parameter: must be true or false" }),
    )
    .openapi({
      type: "boolean",
      description: "Adds each event's `data`. true/false/1/0; default false.",
      default: false,
    }),
});

export const SessionIdParams = z.object({
  sessionId: z
    .string()
    .openapi({ description: "The session's UUID (any case) or the external id it was created with." }),
});

export const RenameSessionBody = z
  .object(
    {
      title: z
        .string({
          error: (i) => (i.input === undefined || i.input === null ? "title is required" : "title must be a string"),
        })
        .openapi({
          description: `Trimmed; control, zero-width and bidirectional-control characters removed (a zero-width joiner inside an emoji is kept); then 1–${TITLE_MAX_CHARS} characters counted as Unicode code points.`,
          example: "Trip planning",
        }),
    },
    { error: "Invalid request body: expected a JSON object" },
  )
  .openapi("RenameSessionRequest");
