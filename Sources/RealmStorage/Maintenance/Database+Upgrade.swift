// MARK: - Upgrade from format 5

extension Database {
    /// The format of the newest version's meta slot: `fileFormatVersion` once the file is upgraded.
    public var fileFormat: UInt32 {
        get throws { try latestMeta().format }
    }

    /// Files of format 5 and before hold node checksums that do not cover the node's page, so a whole node
    /// written to the wrong page (swapped with another, misdirected, duplicated) reads as other data
    /// (DECISIONS 70). Opened writable, such a file is compacted (`compact`): a new file written whole under
    /// another name by this build, which binds every node to its page (format 6), synced, renamed over the
    /// old one, the directory synced. A crash at any point leaves the old file or the new one, whole.
    ///
    /// Compaction needs the file to itself. While another process has it open (perhaps a build that reads
    /// only format 5), the file stays as it is and every commit keeps to format 5 (`Meta.encodedFormat`);
    /// a later writable open that finds the file alone upgrades it. Opened read-only, a file of format 5 is
    /// read by the old rule.
    func upgradeNodeChecksumsIfNeeded() throws {
        guard !isReadOnly, !isInMemory, try latestMeta().format <= Meta.lastUnboundFormat else { return }
        do {
            try compact()
        } catch StorageError.inUseByAnotherProcess {
            // Not an error: the file stays of format 5, read and written by its rule, until it is alone.
        } catch StorageError.inUse {
            // Another thread of this process opened the same database meanwhile and reads it: the same.
        }
    }
}
