export { isUnsafeName, openZip, ZipUnreadable, type Extracted, type ZipMember, type ZipReader } from './read-zip.js'
