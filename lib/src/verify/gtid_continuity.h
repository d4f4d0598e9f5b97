// GtidContinuity: the GTID continuity of binlogctl verify. Each transaction's GTID against what
// the chain executed before (gtid_duplicate, gtid_gap: MySQL uuid[:tag]:gno, MariaDB
// domain-server-seq), each file's GTID header against its predecessor's plus what that file
// executed (previous_gtids_mismatch, gtid_list_mismatch), and the gaps, resolved at the end of
// the chain (a jump later filled by an out-of-order GTID is no gap).
#pragma once

#include <binlogctl/gtid.h>

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "verify/file_chain.h"
#include "verify/seq_set.h"
#include "verify/verify_context.h"

namespace binlogctl::verify {

// The GTID of one transaction, as GtidContinuity took it: counted in the summary's executed
// sets and states only when the transaction ends (a cut-off or broken transaction's GTID would be
// skipped by a replica resuming from them), and what it changed in the chain's GTID bookkeeping,
// to undo it when a crash rolled the transaction back (its server never committed it and reuses
// the GTID).
struct TxnGtid {
  bool has_mysql = false, has_maria = false;
  Uuid uuid{};
  std::string tag;
  std::uint64_t gno = 0;
  MariaGtid maria{};
  bool undo_maria = false;
  bool undo_dom_has_last = false;
  std::uint64_t undo_dom_last = 0;
  bool undo_expect_m = false;  // expect_m was updated: its entry before
  bool undo_expect_m_had = false;
  std::uint64_t undo_expect_m_seq = 0;
  bool undo_maria_gap = false;     // a pending gap was recorded for it
  bool undo_mysql_expect = false;  // the GTID was added to `expect` (it was not there)
  bool undo_mysql_gap = false;
};

class GtidContinuity {
 public:
  GtidContinuity(VerifyContext& ctx, const FileChain& chain) : ctx_(ctx), chain_(chain) {}

  // The GTID event of transaction `txn_id` (had_damage: damage since the previous GTID, so a
  // jump is no gap); what the transaction counts goes to `tg`.
  void mysql_gtid(const Event& ev, const Uuid& uuid, std::string_view tag, std::uint64_t gno,
                  bool had_damage, std::uint64_t txn_id, TxnGtid& tg);
  void mariadb_gtid(const Event& ev, const MariaGtid& g, bool had_damage, std::uint64_t txn_id,
                    TxnGtid& tg);
  // The file's first top-level GTID header (FileChain::first_gtid_header).
  void on_previous_gtids(const Event& ev);
  void on_gtid_list(const Event& ev);

  // The server left transactions out on purpose (Event::omitted_before): what they executed is
  // unknown, so GTID continuity is not checked across the gap, and the next file's GTID header
  // becomes the baseline.
  void on_gap();
  // A break in the file sequence before this file (FileChain::settle_break); `prev_valid`:
  // a file came before.
  void on_chain_break(bool prev_valid);
  // A file that could not be opened: the headers are not compared across it.
  void file_unavailable() {
    expect_valid_ = false;
    expect_m_valid_ = false;
  }
  // A crash rolled back the transaction `tg` belongs to: its GTID leaves the bookkeeping.
  // Returns " (GTID ...)" for the finding, or "" when it had none.
  std::string roll_back(const TxnGtid& tg, std::uint64_t txn_id);
  // The end of the chain: the pending gaps are resolved and reported.
  void report_gaps();

 private:
  struct PendingMysqlGap {
    Uuid uuid;
    std::string tag;
    std::uint64_t first = 0, last = 0;
    std::string log_name;
    std::uint64_t pos = 0;
    std::uint64_t txn_id = 0;
  };

  struct PendingMariaGap {
    MariaGtid gtid;  // the GTID after the jump
    std::uint64_t first = 0, last = 0;
    std::string log_name;
    std::uint64_t pos = 0;
    std::uint64_t txn_id = 0;
  };

  struct DomainServerSeen {
    std::uint32_t domain = 0, server_id = 0;
    SeqSet seen;
  };

  struct DomainState {
    std::uint32_t domain = 0;
    bool has_last = false;
    std::uint64_t last = 0;  // highest seq_no seen in this domain
    SeqSet seen;
  };

  DomainServerSeen& ds_of(std::uint32_t d, std::uint32_t s);
  DomainState& domain_of(std::uint32_t d);
  // A GTID header that does not decode is reported, and the expectation it would have been
  // checked against (`expect_ok`) is dropped.
  template <class Decoded>
  bool header_decoded(const Event& ev, const Decoded& h, bool& expect_ok);

  VerifyContext& ctx_;
  const FileChain& chain_;

  // MySQL GTIDs
  GtidSet expect_;  // Previous_gtids of this file + executed in it
  bool expect_valid_ = false;
  std::vector<PendingMysqlGap> mysql_gaps_;

  // MariaDB GTIDs
  MariaGtidList expect_m_;
  bool expect_m_valid_ = false;
  std::vector<DomainServerSeen> ds_seen_;
  std::vector<DomainState> domains_;
  std::vector<PendingMariaGap> maria_gaps_;

  // After a gap the server made (Event::omitted_before): the (uuid, tag) pairs whose first GTID
  // since has been seen; the first one of each is not checked for continuity.
  bool after_gap_ = false;
  std::set<std::pair<Uuid, std::string>> seen_since_gap_;
  // After a break in the file sequence (a missing file, files out of order, another sequence) and
  // until a GTID header of the primary's own gives the new baseline: what the absent files
  // executed is unknown, so the first GTID of each source is no gap (binlogctl-verify(1),
  // gtid_gap).
  bool break_pending_ = false;
};

}  // namespace binlogctl::verify
