extension Database {
    /// The newest committed version, read from the meta slots without taking a snapshot or a reader slot:
    /// cheap enough to poll a few times a second (the browser's live updates).
    public func latestVersion() throws -> UInt64 { try latestMeta().version }

    /// How many versions are kept alive: the newest, plus each older one some reader (in any process) holds.
    /// Space freed after the oldest of them cannot be reused yet.
    public var liveVersionCount: Int {
        let latest = (try? snapshot()).map { s -> UInt64 in
            defer { s.close() }
            return s.version
        }
        var versions = Set(coordinator.readerVersions())
        if let latest { versions.insert(latest) }
        return max(versions.count, 1)
    }
}
