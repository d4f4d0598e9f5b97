// Column values as SQL literals that give the server back the same bytes (sql_value.cpp): the
// renderer of convert --format sql and --flashback (sql.h).
#pragma once

#include <binlogctl/bytes.h>
#include <binlogctl/columns.h>
#include <binlogctl/result.h>

#include "columns/column_value.h"
#include "render/render_buf.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace binlogctl {

// Appends the SQL literal of a decoded value of column `col`:
//   integers            decimal digits (UNSIGNED values stay unsigned)
//   FLOAT DOUBLE        the shortest digits that give back the same double (FLOAT: the double
//                       the float32 widens to, so that both storing and comparing are exact)
//   DECIMAL             the number as stored, full scale: 12.3400
//   BIT                 b'1010'
//   YEAR                the year as a number (0 for the zero year)
//   DATE DATETIME       'YYYY-MM-DD[ HH:MM:SS[.ffffff]]' (zero dates as stored: '0000-00-00')
//   TIMESTAMP           the same in UTC (the output sets time_zone to '+00:00' for row changes)
//   TIME                '[-]HHH:MM:SS[.ffffff]'
//   text                _utf8mb4'...' (converted from the column charset; quotes doubled); text
//                       with a backslash, a control character, or bytes that do not decode in
//                       its charset as _charset X'..' (the column charset, bytes as stored)
//   binary              X'..' (BINARY(n) padded back to n bytes)
//   ENUM SET            the names as text; the number when the names are not known or do not
//                       cover the value
//   JSON                MySQL: CAST(_utf8mb4'<json text>' AS JSON); MariaDB's JSON is text
//   GEOMETRY            ST_GeomFromWKB(X'<wkb>', srid)
//   VECTOR              X'..' (its binary form)
//   UUID INET4 INET6    their text form: '123e4567-e89b-12d3-a456-426614174000', '::1'
// Errors: those of the JSON and DECIMAL decoders (Errc::bad_value at the value).
Status append_sql_literal(std::string& out, const ColumnInfo& col, const ColumnValue& v);
Status append_sql_literal(RenderBuf& out, const ColumnInfo& col, const ColumnValue& v);

// Text bytes in the charset of `collation` as an SQL string literal (the `text` rule above).
void append_sql_text(std::string& out, std::string_view bytes, std::uint16_t collation);
void append_sql_text(RenderBuf& out, std::string_view bytes, std::uint16_t collation);
// X'..' of the bytes (uppercase hex).
void append_sql_hex(std::string& out, Bytes b);
void append_sql_hex(RenderBuf& out, Bytes b);

}  // namespace binlogctl
