import { ErrorResponseSchema, type RouteResponse } from "@tog/edge";

/** An error answer in the OpenAPI document: the contract's `{"error": "..."}` body. */
export function errorResponse(description: string): RouteResponse {
  return { description, schema: ErrorResponseSchema };
}
