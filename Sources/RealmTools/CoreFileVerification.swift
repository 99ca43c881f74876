import Foundation
import RealmCoreFile
import RealmStorage

/// `verify` on a Realm Core file: the reader walks every object of every table (internal ones included), every
/// value and every backlink, following every link to an object of its target table; then, unless told not to,
/// the file is converted into memory and the copy is verified. The first problem is an error naming where it is.
public enum CoreFileVerification {
    /// The report's text. `convert: false` leaves out the conversion (which holds the whole file in memory).
    public static func run(_ core: RealmCoreFile, convert: Bool = true) throws -> String {
        var objects = 0, values = 0, links = 0
        for cls in core.classes + core.systemTables {
            try core.forEachObject(of: cls) { object in
                let position = object.position
                values += object.values.count
                for link in object.values.flatMap(\.allLinks) {
                    guard let target = core.class(named: link.className), try core.position(of: target, key: link.key) != nil else {
                        throw ToolError.data(file: core.path, className: cls.name, index: position, property: nil,
                                             message: "a link to \(link.className) key \(link.key), which the file does not hold")
                    }
                    links += 1
                }
                _ = try core.backlinks(of: cls, at: position)
                objects += 1
                return true
            }
        }
        var text = "Realm Core file, format \(core.format): \(counted(core.classes.count, "class", "classes")) and "
            + "\(counted(core.systemTables.count, "internal table")), \(counted(objects, "object")), \(counted(values, "value")) and "
            + "\(counted(links, "link")) read\n"
        if convert {
            let db = try ToolError.wrap { try Database.inMemory(identifier: "realm-core-verify-\(UUID().uuidString)") }
            try CoreConversion(file: core).run(into: db)
            let report = try ToolError.wrap { try db.verify() }
            guard report.isOK else {
                throw ToolError.io(path: core.path, message: "the converted copy does not verify: \(report.problems.first ?? "")")
            }
            text += "converted copy: \(counted(report.objects, "object"))\n"
        }
        return text + "no problems found"
    }
}

extension CoreValue {
    /// The links in this value and in the collections it holds.
    var allLinks: [CoreLink] {
        switch self {
        case .link(let l): return [l]
        case .list(let v), .set(let v): return v.flatMap(\.allLinks)
        case .dictionary(let entries): return entries.flatMap(\.value.allLinks)
        default: return []
        }
    }
}
