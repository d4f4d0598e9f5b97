// The decoded body of an event as a JSON object (dump --decode): the fields of its type.
#pragma once

#include <binlogctl/event_stream.h>

#include "dump/info.h"
#include "render/json_out.h"

namespace binlogctl {

// Writes the body object's members (without the braces) through w. On a decode error, writes
// nothing more and returns the error.
Status describe_body(JsonWriter& w, const Event& ev, InfoScratch& scratch);

// The body object (braces included) of a statement event (QUERY, MariaDB's compressed QUERY,
// EXECUTE_LOAD_QUERY) appended to `out` with its "sql" string left empty, for writing a huge
// statement in pieces: `sql` views the statement (the event's bytes, or `scratch` for a
// compressed one) and `sql_at` is the offset in `out` where its escaped text goes (just past the
// opening quote). False, `out` unchanged, for other events and for a body that does not decode.
bool describe_statement_parts(std::string& out, const Event& ev, InfoScratch& scratch, std::string_view& sql,
                              std::size_t& sql_at);

}  // namespace binlogctl
