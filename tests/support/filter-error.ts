/** Where and why the filter parser refuses `text` (a test fails if it parses). */
import { FilterSyntaxError, parseFilter } from '../../functions/core/filters/parse';

export function filterErrorOf(text: string): { column: number; message: string } {
  try {
    parseFilter(text);
  } catch (error) {
    if (error instanceof FilterSyntaxError) return { column: error.column, message: error.message };
    throw error;
  }
  throw new Error(`${text} parsed`);
}
