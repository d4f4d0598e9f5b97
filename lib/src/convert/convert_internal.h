// What convert's output formats (json, sql, Canal) share inside the library: how they read the
// chain and which table a DDL statement names.
#pragma once

#include <binlogctl/chain.h>
#include <binlogctl/convert.h>

#include <string>
#include <string_view>

namespace binlogctl {

// The (first) table a DDL statement names (CREATE/ALTER/DROP/TRUNCATE/RENAME TABLE, CREATE/DROP
// INDEX ... ON t, CREATE TRIGGER ... ON t; ddl_targets in schema.h), for filters and headers: db
// is left as is when the statement does not qualify the table. Returns false when none is found
// (statements on databases, views, routines, users, privileges; statements not understood).
bool ddl_table(std::string_view sql, std::string& db, std::string& table);

// How convert reads the chain (positions, times, checksums), for every output format.
ChainOptions chain_options(const ConvertOptions& opts);

}  // namespace binlogctl
