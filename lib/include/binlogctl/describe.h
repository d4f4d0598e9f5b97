// The decoded body of an event as a JSON object (dump --decode): the fields of its type.
#pragma once

#include <binlogctl/event_stream.h>
#include <binlogctl/info.h>
#include <binlogctl/json_out.h>

namespace binlogctl {

// Writes the body object's members (without the braces) through w. On a decode error, writes
// nothing more and returns the error.
Status describe_body(JsonWriter& w, const Event& ev, InfoScratch& scratch);

}  // namespace binlogctl
