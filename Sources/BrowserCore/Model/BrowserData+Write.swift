import Foundation
import RealmStorage

/// One cell of one object, for marking what the open transaction changed.
public struct CellID: Hashable, Sendable {
    public var className: String
    public var key: ObjectKey
    public var property: String
    public init(_ className: String, _ key: ObjectKey, _ property: String) {
        self.className = className
        self.key = key
        self.property = property
    }
}

/// Why a write did not happen.
public enum WriteRefusal: Error, Equatable, CustomStringConvertible {
    /// Another process (or thread) holds the write lock: try again later.
    case busy
    case readOnly
    /// The file is a Realm Core file, browsed through a copy in memory: it is never written.
    case realmCoreFile

    public var description: String {
        switch self {
        case .busy: return "another process is writing to this file"
        case .readOnly: return "the file is open read-only"
        case .realmCoreFile:
            return "the file is a Realm Core file, open read-only: :convert OUT.realm writes a copy in this format and opens it to edit"
        }
    }
}

extension BrowserData {
    public var isInTransaction: Bool { transaction != nil }

    /// Why an edit is refused when the browser is read-only.
    public var readOnlyRefusal: WriteRefusal { realmCore != nil ? .realmCoreFile : .readOnly }

    /// Runs `body` as one change: inside the open transaction (uncommitted, marked), or in a write
    /// transaction of its own that commits at once. `cells` are the cells it changes, for the marks.
    /// Throws `WriteRefusal.busy` without waiting when another process holds the write lock; if `body`
    /// throws, nothing of it is kept.
    public func write(cells: [CellID] = [], _ body: (WriteTransaction) throws -> Void) throws {
        if isReadOnly { throw readOnlyRefusal }
        if let tx = transaction {
            // The engine checks each operation before changing anything, so a refused edit leaves the
            // transaction as it was.
            try body(tx)
            changedCells.formUnion(cells)
            pendingEdits += 1
            invalidateCaches()
            return
        }
        guard let tx = try database.tryBeginWrite() else { throw WriteRefusal.busy }
        do {
            try body(tx)
            try tx.commit()
        } catch {
            tx.rollback()
            throw error
        }
        try refreshIfChanged()
    }

    /// Marks every cell of a new object as changed (when a transaction is open).
    func markNew(_ ref: ObjectRef) {
        if transaction != nil { changedCells.insert(CellID(ref.className, ref.key, "*")) }
    }

    /// Whether the open transaction changed this cell.
    public func isChanged(_ ref: ObjectRef, _ property: String) -> Bool {
        guard !changedCells.isEmpty else { return false }
        return changedCells.contains(CellID(ref.className, ref.key, property)) || changedCells.contains(CellID(ref.className, ref.key, "*"))
    }

    /// `t`: begins a write transaction whose edits stay uncommitted until `commit()`.
    public func beginTransaction() throws {
        guard transaction == nil else { return }
        if isReadOnly { throw readOnlyRefusal }
        guard let tx = try database.tryBeginWrite() else { throw WriteRefusal.busy }
        snapshot.close()
        snapshot = tx
        transaction = tx
        changedCells = []
        pendingEdits = 0
        invalidateCaches()
    }

    /// Commits the open transaction; returns how many edits it held.
    @discardableResult
    public func commitTransaction() throws -> Int {
        guard let tx = transaction else { return 0 }
        let n = pendingEdits
        do {
            try tx.commit()
        } catch {
            tx.rollback()
            try endTransaction()
            throw error
        }
        try endTransaction()
        return n
    }

    /// Discards the open transaction; returns how many edits it held.
    @discardableResult
    public func rollbackTransaction() throws -> Int {
        guard let tx = transaction else { return 0 }
        let n = pendingEdits
        tx.rollback()
        try endTransaction()
        return n
    }

    private func endTransaction() throws {
        transaction = nil
        changedCells = []
        pendingEdits = 0
        snapshot = try database.snapshot()
        invalidateCaches()
        fileBytes = BrowserData.size(of: database)
    }

    /// A primary key value no object of the class has yet: the next integer, a new ObjectId or UUID, or
    /// `new-N` for strings.
    public func suggestedPrimaryKey(_ className: String) throws -> (String, Value)? {
        guard let cs = classSchema(className), let pk = cs.properties.first(where: \.isPrimaryKey) else { return nil }
        let t = try table(className)
        switch pk.type {
        case .int:
            var maxValue: Int64 = -1
            // Keys are in ascending order and a required int key is the object key: the last one is the largest.
            let n = try snapshot.count(t)
            if n > 0, let k = try snapshot.key(at: n - 1, in: t), case .int(let v) = try snapshot.value(k, handle(className, pk.name)) {
                maxValue = v
            }
            if !pk.isOptional || maxValue >= 0 {
                // An optional int key is not the object key: check the guess, step on until it is free.
                var candidate = maxValue &+ 1
                while try snapshot.object(t, primaryKey: .int(candidate)) != nil { candidate &+= 1 }
                return (pk.name, .int(candidate))
            }
            return (pk.name, .int(0))
        case .string:
            var i = try snapshot.count(t) + 1
            while try snapshot.object(t, primaryKey: .string("new-\(i)")) != nil { i += 1 }
            return (pk.name, .string("new-\(i)"))
        case .objectId: return (pk.name, .objectId(ObjectId.generate()))
        case .uuid: return (pk.name, .uuid(UUID()))
        default: return nil
        }
    }
}
