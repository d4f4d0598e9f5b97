// column_type_text: a column's type as its definition declares it.
#include <binlogctl/schema.h>

namespace binlogctl {

std::string column_type_text(const SchemaColumn& c) {
  std::string s = c.type;
  if (c.type == "enum" || c.type == "set") {
    s.push_back('(');
    for (std::size_t i = 0; i < c.elements.size(); ++i) {
      if (i > 0) s.push_back(',');
      s.push_back('\'');
      for (char ch : c.elements[i]) {
        if (ch == '\'') s.push_back('\'');  // SQL doubles quotes inside a literal
        s.push_back(ch);
      }
      s.push_back('\'');
    }
    s.push_back(')');
  } else if (c.type == "time" || c.type == "datetime" || c.type == "timestamp") {
    if (c.decimals >= 0) s += "(" + std::to_string(c.decimals) + ")";
  } else if (c.length >= 0) {
    s += "(" + std::to_string(c.length);
    if (c.decimals >= 0) s += "," + std::to_string(c.decimals);
    s.push_back(')');
  }
  if (c.is_unsigned) s += " unsigned";
  if (c.zerofill) s += " zerofill";
  return s;
}

}  // namespace binlogctl
