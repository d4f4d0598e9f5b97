// The Info column of SHOW BINLOG EVENTS, event type by event type, in the wording of the server
// that wrote the file (MySQL's or MariaDB's, from the FDE in force).
#pragma once

#include <binlogctl/event_stream.h>
#include <binlogctl/result.h>

#include "events/events.h"

#include <string>

namespace binlogctl {

// Reusable buffers for decoders that need to own bytes (decompressed MariaDB events).
struct InfoScratch {
  std::string buf;
};

// A QUERY or MariaDB QUERY_COMPRESSED event decoded for dump, `sql` its statement text: for a
// compressed one inflated into scratch.buf (a decompression error carries the offset of the
// compressed text).
Result<QueryEvent> decode_query_text(const Event& ev, InfoScratch& scratch);

// Appends the Info text of `ev` to `out`. On a body that does not decode, appends nothing
// and returns the error (offset absolute).
Status append_info(std::string& out, const Event& ev, InfoScratch& scratch);

// The Info text of a statement event (QUERY, MariaDB's compressed QUERY, EXECUTE_LOAD_QUERY) in
// three parts, the statement itself not copied: `head` + `sql` + `tail` is what append_info
// appends (`sql` views the event's body, or `scratch` for a compressed one). For writing a huge
// statement in pieces. False for other events and for a body that does not decode.
bool query_info_parts(const Event& ev, InfoScratch& scratch, std::string& head, std::string_view& sql,
                      std::string& tail);

// `name` quoted as an SQL identifier: backticks, embedded backticks doubled.
void append_quoted_identifier(std::string& out, std::string_view name);

// Collation name of a MySQL/MariaDB collation id ("utf8mb4_general_ci"), or nullptr if unknown.
const char* collation_name(std::uint32_t id, Flavor flavor) noexcept;

}  // namespace binlogctl
