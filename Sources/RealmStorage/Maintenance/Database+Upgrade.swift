#if canImport(Glibc)
import Glibc
#endif

// MARK: - Upgrade from format 5

extension Database {
    /// The format of the newest version's meta slot: `fileFormatVersion` once the file is upgraded.
    public var fileFormat: UInt32 {
        get throws { try latestMeta().format }
    }

    /// Upgrades a file of format 5 or before to `fileFormatVersion` now; nothing for a file of it already.
    /// Files of format 5 and before hold node checksums that do not cover the node's page, so a whole node
    /// written to the wrong page (swapped with another, misdirected, duplicated) reads as other data
    /// (DECISIONS 73). The upgrade is a compaction (`compact`): a new file written whole under another name by
    /// this build, which binds every node to its page (format 6), synced, renamed over the old one, the
    /// directory synced. A crash at any point leaves the old file or the new one, whole. Throws what kept it
    /// from upgrading: `inUseByAnotherProcess` while another process has the file open, a full disk (the new
    /// file needs room beside the old one).
    ///
    /// A file of format 6, 7 or 8 needs no rewriting (formats 7, 8 and 9 only add structures): one empty commit marks
    /// it with the current format, which every commit of this build does anyway.
    public func upgradeFileFormat() throws {
        if isReadOnly { throw StorageError.readOnly(path: path) }
        let format = try latestMeta().format
        guard !isInMemory, format < Meta.formatVersion else { return }
        if format <= Meta.lastUnboundFormat {
            try compact()
        } else {
            let w = try beginWrite()
            w.catalogueChanged = true
            try w.commit()
        }
    }

    /// The upgrade a writable open makes (`upgradeFileFormat`). When it cannot be made now the file stays as
    /// it is, read and written by the rule of its format (every commit keeps to format 5,
    /// `Meta.encodedFormat`), and the next writable open tries again: while another process has the file open
    /// (perhaps a build that reads only format 5), and on a full disk (a database that cannot be opened could
    /// not have objects deleted to make room). Opened read-only, a file of format 5 is read by the old rule.
    func upgradeNodeChecksumsIfNeeded() throws {
        guard !isReadOnly else { return }
        do {
            try upgradeFileFormat()
        } catch StorageError.inUseByAnotherProcess {
            // Not an error: the file works as it is, and `info` names its format and the upgrade.
        } catch StorageError.inUse {
            // Another thread of this process opened the same database meanwhile and reads it: the same.
        } catch StorageError.io(_, _, let e) where e == ENOSPC || e == EDQUOT {
            // No room for the new file (compaction removed what it wrote): the same.
        }
    }
}
