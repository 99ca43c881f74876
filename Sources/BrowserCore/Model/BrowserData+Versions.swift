import RealmCoreFile
import RealmStorage
import RealmTools

/// Newer versions: found, read apart by a job, then shown (or declined with Esc).
extension BrowserData {
    /// A newer version read but not shown yet: its reader, made on the main thread (a job reads a sibling of
    /// it), and for a Realm Core file the file it reads. `BrowserData.show` makes it the version shown; one
    /// that is not wanted any more is `close`d.
    public final class NewerVersion {
        let reader: any ObjectReader
        let core: (file: RealmCoreFile, source: CoreSource)?
        private(set) var isOpen = true

        init(reader: any ObjectReader, core: (file: RealmCoreFile, source: CoreSource)?) {
            self.reader = reader
            self.core = core
        }

        public var version: UInt64 { reader.version }

        /// Gives the reader back (the version is not shown).
        public func close() {
            guard isOpen else { return }
            isOpen = false
            reader.close()
        }
    }

    /// The newest committed version when it is not the one shown (nil when nothing changed): read, not shown.
    /// Cheap when nothing changed: reads the two meta slots, no reader slot (a Realm Core file: its stamp).
    /// With `than`, nil as well when the newest is the version `than` reads (one being read already).
    public func newerVersion(than pending: NewerVersion? = nil) throws -> NewerVersion? {
        // While this browser holds the write transaction nobody else can commit.
        guard transaction == nil else { return nil }
        if realmCore != nil {
            guard let source = coreSource, let now = RealmCoreFile.stamp(path: source.path), now != source.stamp,
                  now != declined?.stamp, now != pending?.core?.source.stamp else { return nil }
            let opened = try CoreSource.open(source.path, key: source.key)
            return NewerVersion(reader: try CoreFileReader(file: opened.file), core: opened)
        }
        let latest = try database.latestVersion()
        guard latest != snapshot.version, latest != declined?.version, latest != pending?.version else { return nil }
        return NewerVersion(reader: try database.snapshot(), core: nil)
    }

    /// Closes a newer version and does not offer it again.
    public func decline(_ newer: NewerVersion) {
        declined = (newer.core == nil ? newer.version : nil, newer.core?.source.stamp)
        newer.close()
    }

    /// Makes a newer version the one shown: everything read from the old one is forgotten (collection tables
    /// read in the new one by a job are `install`ed after this).
    public func show(_ newer: NewerVersion) {
        precondition(newer.isOpen, "a closed version cannot be shown")
        snapshot.close()
        snapshot = newer.reader
        declined = nil
        if let core = newer.core {
            realmCore = core.file
            coreSource = core.source
            fileBytes = core.file.fileSize
        } else {
            fileBytes = BrowserData.size(of: database)
        }
        invalidateCaches()
    }

    /// Takes a new snapshot when a newer version was committed (by this or another process), and shows it at
    /// once. Cheap when nothing changed.
    @discardableResult
    public func refreshIfChanged() throws -> Bool {
        guard let newer = try newerVersion() else { return false }
        show(newer)
        return true
    }
}
